import {strict as assert} from 'node:assert'
import {mkdtemp, readFile, rm, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {runCli} from '../../helpers/cli.js'

describe('gpunet job init', () => {
  let dir: string
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gpunet-init-'))
  })
  afterEach(() => rm(dir, {recursive: true, force: true}))

  it('lists the templates without flags, in both modes', async () => {
    const human = await runCli(['job', 'init'])
    assert.equal(human.code, 0)
    assert.match(human.stdout, /^hello-world\s+Prints a greeting/m)
    assert.match(human.stdout, /^ollama-inference\s+/m)
    const json = await runCli(['job', 'init', '--json'])
    const doc = JSON.parse(json.stdout)
    assert.ok(doc.templates.length >= 8)
    assert.deepEqual(Object.keys(doc.templates[0]), ['name', 'description'])
  })

  it('writes job.json by default and the file validates', async () => {
    const r = await runCli(['job', 'init', '--template', 'hello-world'], {cwd: dir})
    assert.equal(r.code, 0, r.stderr)
    assert.match(r.stdout, /^Wrote job\.json from the hello-world template\./)
    const written = JSON.parse(await readFile(join(dir, 'job.json'), 'utf8'))
    assert.equal(written.ops[0].id, 'hello')
    const check = await runCli(['job', 'validate', 'job.json'], {cwd: dir})
    assert.equal(check.code, 0)
  })

  it('-o x.yaml writes YAML, the same definition, which validates', async () => {
    const r = await runCli(['job', 'init', '-t', 'hello-world', '-o', 'x.yaml'], {cwd: dir})
    assert.equal(r.code, 0, r.stderr)
    const text = await readFile(join(dir, 'x.yaml'), 'utf8')
    assert.doesNotMatch(text, /^\s*\{/, 'not JSON')
    const {parse} = await import('yaml')
    const template = JSON.parse((await runCli(['job', 'init', '-t', 'hello-world', '-o', '-'])).stdout) as unknown
    assert.deepEqual(parse(text), template)
    assert.equal((await runCli(['job', 'validate', 'x.yaml'], {cwd: dir})).code, 0)
  })

  it('refuses to overwrite without --force (exit 2) and keeps the file', async () => {
    const out = join(dir, 'mine.json')
    await writeFile(out, 'precious')
    const r = await runCli(['job', 'init', '-t', 'hello-world', '-o', out])
    assert.equal(r.code, 2)
    assert.match(r.stderr, /already exists/)
    assert.match(r.stderr, /--force/)
    assert.equal(await readFile(out, 'utf8'), 'precious')
    const forced = await runCli(['job', 'init', '-t', 'hello-world', '-o', out, '--force', '--json'])
    assert.equal(forced.code, 0)
    assert.deepEqual(JSON.parse(forced.stdout), {template: 'hello-world', file: out})
  })

  it('prints to standard output with --out -', async () => {
    const r = await runCli(['job', 'init', '-t', 'jupyter-notebook', '--out', '-'])
    assert.equal(r.code, 0)
    assert.equal(JSON.parse(r.stdout).ops[0].id, 'jupyter')
  })

  it('suggests the closest name for an unknown template (exit 2)', async () => {
    const r = await runCli(['job', 'init', '-t', 'olama-inference', '--json'], {cwd: dir})
    assert.equal(r.code, 2)
    assert.deepEqual(JSON.parse(r.stdout).error.code, 'unknown_template')
    assert.match(JSON.parse(r.stdout).error.hint, /did you mean "ollama-inference"/)
  })
})
