import {execute} from '@oclif/core'

/** Runs the gpunet CLI; bin/run.js loads the bundled copy of this file. */
await execute({dir: import.meta.url})
