import {strict as assert} from 'node:assert'
import {readFile} from 'node:fs/promises'

import {lintJobDefinition} from '../../../src/lib/definition/lint.js'
import {findSecretReferences} from '../../../src/lib/definition/secret-refs.js'
import {validateJobDefinition} from '../../../src/lib/definition/validate.js'
import {findTemplate, listTemplates} from '../../../src/lib/definition/templates.js'

describe('job templates', () => {
  it('ships at least eight, each described', async () => {
    const templates = await listTemplates()
    assert.ok(templates.length >= 8, `only ${templates.length} templates`)
    for (const t of templates) assert.ok(t.description.length > 20, `${t.name} has no description`)
  })

  it('every template is valid and has no warnings', async () => {
    for (const t of await listTemplates()) {
      const value = JSON.parse(await readFile(t.file, 'utf8'))
      const result = validateJobDefinition(value)
      assert.equal(result.success, true, `${t.name}: ${JSON.stringify(result.errors)}`)
      assert.deepEqual(lintJobDefinition(value), [], `${t.name} has warnings`)
    }
  })

  it('covers what the issue asks for', async () => {
    const load = async (name: string) => JSON.parse(await readFile((await findTemplate(name)).file, 'utf8'))
    const ollama = await load('ollama-inference')
    const port = ollama.ops[0].args.expose[0]
    assert.equal(port.port, 11434)
    assert.equal(port.health_checks[0].type, 'http')
    assert.deepEqual(findSecretReferences(await load('private-registry')), ['REGISTRY_PASSWORD'])
    assert.equal(
      (await load('private-registry')).ops[0].args.authentication.docker.password,
      '%%secrets.REGISTRY_PASSWORD%%',
    )
    assert.equal((await load('s3-dataset')).ops[0].args.resources[0].type, 'S3')
    assert.equal((await load('hf-model')).ops[0].args.resources[0].type, 'HF')
    assert.ok((await load('multi-op-pipeline')).ops.length >= 3)
    for (const name of [
      'hello-world',
      'openai-llm-server',
      'jupyter-notebook',
      'image-generation-webui',
      'batch-transcription',
    ]) {
      assert.equal(validateJobDefinition(await load(name)).success, true)
    }
  })

  it('refuses an unknown name with a suggestion and exit code 2', async () => {
    await assert.rejects(findTemplate('helo-world'), (error: Error & {exitCode: number; hint: string}) => {
      assert.equal(error.exitCode, 2)
      assert.match(error.hint, /did you mean "hello-world"/)
      return true
    })
  })
})
