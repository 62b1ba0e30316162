/**
 * GPUNET_CONTENT_TYPE turns JSON on in oclif, so the start-up path of `job validate` (src/cli/fast-start.ts) must hand
 * such a command line to oclif. A mutation audit (issue 26) found no test setting it.
 */
import {strict as assert} from 'node:assert'
import {fileURLToPath} from 'node:url'

import {plainValidate} from '../../src/cli/fast-start.js'
import {runCli} from '../helpers/cli.js'

const TEMPLATE = fileURLToPath(new URL('../../job-templates/hello-world.json', import.meta.url))

describe('`job validate` with GPUNET_CONTENT_TYPE', () => {
  it('is not served by the start-up path when GPUNET_CONTENT_TYPE is set', () => {
    const saved = process.env.GPUNET_CONTENT_TYPE
    try {
      delete process.env.GPUNET_CONTENT_TYPE
      assert.deepEqual(plainValidate(['job', 'validate', TEMPLATE]), {
        files: [TEMPLATE],
        json: false,
        strict: false,
        frames: true,
      })
      process.env.GPUNET_CONTENT_TYPE = 'json'
      assert.equal(plainValidate(['job', 'validate', TEMPLATE]), undefined)
    } finally {
      if (saved === undefined) delete process.env.GPUNET_CONTENT_TYPE
      else process.env.GPUNET_CONTENT_TYPE = saved
    }
  })

  it('answers JSON, as oclif does, when GPUNET_CONTENT_TYPE=json', async () => {
    const env = {GPUNET_CONTENT_TYPE: 'json'}
    const fast = await runCli(['job', 'validate', TEMPLATE], {env})
    const oclif = await runCli(['job:validate', TEMPLATE], {env})
    assert.deepEqual(fast, oclif)
    assert.equal(fast.code, 0, fast.stderr)
    assert.equal((JSON.parse(fast.stdout) as {valid: boolean}).valid, true)
  })
})
