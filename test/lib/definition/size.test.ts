import {strict as assert} from 'node:assert'

import {ExitCode, GpunetError} from '../../../src/lib/errors.js'
import {checkDefinitionSize, MAX_DEFINITION_BYTES} from '../../../src/lib/definition/size.js'

describe('the size limit of a posted definition', () => {
  it('is 1 MiB: a definition of exactly that many bytes passes', () => {
    assert.equal(MAX_DEFINITION_BYTES, 1_048_576)
    assert.doesNotThrow(() => checkDefinitionSize(new Uint8Array(MAX_DEFINITION_BYTES)))
    assert.doesNotThrow(() => checkDefinitionSize(new Uint8Array(0)))
  })

  it('one byte more is refused with exit 3, both sizes and why, before anything is uploaded', () => {
    assert.throws(
      () => checkDefinitionSize(new Uint8Array(MAX_DEFINITION_BYTES + 1)),
      (error: unknown) => {
        assert.ok(error instanceof GpunetError)
        assert.equal(error.code, 'definition_too_large')
        assert.equal(error.exitCode, ExitCode.INVALID_INPUT)
        assert.equal(error.message, 'the job definition is 1048577 bytes as posted; the limit is 1048576 bytes (1 MiB)')
        assert.match(error.hint ?? '', /could not get the secrets of a larger job/)
        assert.match(error.hint ?? '', /nothing was uploaded or sent$/)
        return true
      },
    )
  })
})
