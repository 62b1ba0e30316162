import {strict as assert} from 'node:assert'
import {readFile} from 'node:fs/promises'

import {runCli} from '../../helpers/cli.js'

describe('gpunet job schema', () => {
  it('prints the shipped JSON Schema, byte for byte, in both modes', async () => {
    const shipped = await readFile(new URL('../../../schema/job-definition.schema.json', import.meta.url), 'utf8')
    const human = await runCli(['job', 'schema'])
    assert.equal(human.code, 0)
    assert.equal(human.stdout, shipped)
    assert.equal(human.stderr, '')
    const json = await runCli(['job', 'schema', '--json'])
    assert.equal(json.code, 0)
    assert.deepEqual(JSON.parse(json.stdout), JSON.parse(shipped))
  })
})
