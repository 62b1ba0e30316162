import {strict as assert} from 'node:assert'
import {execFile} from 'node:child_process'
import {mkdir, mkdtemp, rm, symlink, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {promisify} from 'node:util'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

describe('the gpunet package', () => {
  it("exports the library: import {validateJobDefinition} from 'gpunet' works from another project", async () => {
    const project = await mkdtemp(join(tmpdir(), 'gpunet-consumer-'))
    try {
      await mkdir(join(project, 'node_modules'))
      await symlink(ROOT, join(project, 'node_modules', 'gpunet'), 'dir')
      await writeFile(
        join(project, 'main.mjs'),
        `import {validateJobDefinition, jobDefinitionJsonSchema} from 'gpunet'
const good = validateJobDefinition({version: '0.1', type: 'container', ops: [{id: 'a', type: 'container/run', args: {image: 'x'}}]})
const bad = validateJobDefinition({version: '0.1', type: 'container', ops: []})
console.log(JSON.stringify({good: good.success, bad: bad.success, code: bad.errors[0].code, schema: jobDefinitionJsonSchema().$schema}))
`,
      )
      const {stdout} = await promisify(execFile)(process.execPath, ['main.mjs'], {cwd: project})
      assert.deepEqual(JSON.parse(stdout), {
        good: true,
        bad: false,
        code: 'too_few_items',
        schema: 'https://json-schema.org/draft/2020-12/schema',
      })
    } finally {
      await rm(project, {recursive: true, force: true})
    }
  })
})
