import {strict as assert} from 'node:assert'
import {readdirSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'

import {ExitCode, GpunetError} from '../../src/lib/errors.js'

const SRC = fileURLToPath(new URL('../../src', import.meta.url))

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, {withFileTypes: true}).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  )
}

describe('GpunetError', () => {
  it('prints structured fields as members of the error document', () => {
    const error = new GpunetError('wait_timeout', 'job J is still QUEUED after 5 s', {
      exitCode: ExitCode.TIMEOUT,
      hint: 'follow it',
      fields: {job: 'J', status: 'QUEUED', timeout: 5},
    })
    assert.deepEqual(error.toJSON(), {
      error: {
        code: 'wait_timeout',
        message: 'job J is still QUEUED after 5 s',
        hint: 'follow it',
        job: 'J',
        status: 'QUEUED',
        timeout: 5,
      },
    })
    assert.deepEqual(new GpunetError('x', 'm').toJSON(), {error: {code: 'x', message: 'm'}})
  })

  it('every error code written in src/ is snake_case', () => {
    const codes: string[] = []
    for (const file of sourceFiles(SRC)) {
      for (const match of readFileSync(file, 'utf8').matchAll(/GpunetError\(\s*'([^']*)'/g)) codes.push(match[1]!)
    }
    assert.ok(codes.length > 50, `${codes.length} codes found`)
    assert.deepEqual(
      codes.filter((code) => !/^[a-z][a-z0-9]*(_[a-z0-9]+)*$/.test(code)),
      [],
    )
  })
})
