// Writes src/lib/definition/fast-path/generated.ts, the compiled validator of the job definition, from the zod
// schema (see generate.ts beside it). Run by `npm run build` and before `npm run lint`; the file is not committed.
import {readFileSync, writeFileSync} from 'node:fs'
import {fileURLToPath} from 'node:url'

import {tsImport} from 'tsx/esm/api'

/** Path of the generated module. */
export const FAST_PATH_FILE = fileURLToPath(new URL('../src/lib/definition/fast-path/generated.ts', import.meta.url))

/** Generates the module; rewrites the file only when its text changes, so tsc and editors see no churn. */
export async function generateFastPath() {
  const {generateFastPathSource} = await tsImport('../src/lib/definition/fast-path/generate.ts', import.meta.url)
  const source = generateFastPathSource()
  let current
  try {
    current = readFileSync(FAST_PATH_FILE, 'utf8')
  } catch {
    current = undefined
  }
  if (current !== source) writeFileSync(FAST_PATH_FILE, source)
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await generateFastPath()
