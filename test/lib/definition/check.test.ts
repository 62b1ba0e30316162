import {strict as assert} from 'node:assert'
import {mkdtemp, rm, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {checkDefinitionFile, checkDefinitionText, readDefinitionText} from '../../../src/lib/definition/check.js'
import {describeReadError} from '../../../src/lib/text/read-error.js'

const WARNED = JSON.stringify(
  {
    version: '0.1',
    type: 'container',
    ops: [{id: 'run', type: 'container/run', args: {image: 'ubuntu', cmd: ['echo', '%%secret.X%%']}}],
  },
  null,
  2,
)
const noStdin = () => Promise.reject(new Error('no standard input in this test'))
const problemOf = (read: Awaited<ReturnType<typeof readDefinitionText>>) =>
  'problem' in read ? read.problem : undefined

describe('checking a definition’s text and file (job validate’s library)', () => {
  let dir: string
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gpunet-check-'))
  })
  after(async () => {
    await rm(dir, {recursive: true, force: true})
  })

  it('a valid definition with a warning: valid, the warning pinned to its line and column', async () => {
    const {report, text} = await checkDefinitionText(WARNED, 'job.json')
    assert.equal(text, WARNED)
    assert.equal(report.valid, true)
    assert.deepEqual(report.errors, [])
    assert.deepEqual(
      report.warnings.map((w) => [w.code, w.path, w.line, w.column]),
      [['malformed_secret_reference', 'ops[0].args.cmd[1]', 12, 11]],
    )
    assert.equal('network' in report, false)
  })

  it('lists warnings in the order of the file, whatever rule found each', async () => {
    const args = [
      {image: 'ubuntu', resources: [{type: 'HF', target: '/m'}], cmd: ['echo', '%%secret.X%%']},
      {image: 'ubuntu', cmd: ['echo', '%%secret.X%%'], resources: [{type: 'HF', target: '/m'}]},
    ]
    for (const arg of args) {
      const text = JSON.stringify(
        {version: '0.1', type: 'container', ops: [{id: 'run', type: 'container/run', args: arg}]},
        null,
        2,
      )
      const {report} = await checkDefinitionText(text, 'job.json')
      const lines = report.warnings.map((w) => w.line)
      assert.equal(lines.length, 2)
      assert.deepEqual(
        lines,
        [...lines].sort((a, b) => a - b),
        JSON.stringify(report.warnings),
      )
    }
  })

  it('--strict: the same warning makes it invalid, with no error', async () => {
    const {report} = await checkDefinitionText(WARNED, 'job.json', {strict: true})
    assert.equal(report.valid, false)
    assert.deepEqual(report.errors, [])
    assert.equal(report.warnings.length, 1)
  })

  it('with a network: its verdict and checks, and what would be uploaded', async () => {
    const checked = await checkDefinitionText(WARNED, 'job.json', {network: 'devnet'})
    assert.equal(checked.report.valid, true)
    assert.equal(checked.report.network?.name, 'devnet')
    assert.equal(checked.report.network?.accepted, true)
    assert.deepEqual(
      checked.report.network?.checks.map((c) => c.by.replace(/ [\d.]+$/, '')),
      ['spec', 'translation', '@nosana/types'],
    )
    assert.ok(checked.upload, 'the upload is prepared')
  })

  it('an error is pinned where it is: a missing field at its parent object', async () => {
    const text = '{"version": "0.1", "type": "container",\n "ops": [{"id": "a", "type": "container/run", "args": {}}]}'
    const {report} = await checkDefinitionText(text, 'job.json')
    assert.equal(report.valid, false)
    assert.deepEqual(
      report.errors.map((e) => [e.code, e.path, e.line, e.column]),
      [['missing_field', 'ops[0].args.image', 2, 47]],
    )
  })

  it('several errors come in the order of the text', async () => {
    const text =
      '{"version": "0.1", "type": "container", "ops": [\n  {"id": "a", "type": "container/run", "args": {"image": 1}},\n  {"id": "a", "type": "nope", "args": {}}\n]}'
    const {report} = await checkDefinitionText(text, 'job.json')
    const positions = report.errors.map((e) => [e.line, e.column])
    assert.ok(positions.length >= 2, JSON.stringify(report.errors))
    assert.deepEqual(
      positions,
      [...positions].sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!),
    )
  })

  it('a syntax error is one error at its position, and nothing else runs', async () => {
    const {report, text} = await checkDefinitionText('{"a": ', 'job.json')
    assert.equal(text, '{"a": ')
    assert.deepEqual(report, {
      file: 'job.json',
      valid: false,
      errors: [
        {path: '', pointer: '', code: 'syntax_error', message: 'invalid JSON: expected a value', line: 1, column: 7},
      ],
      warnings: [],
    })
  })

  it('nested too deep: only the nesting error, no warnings, even with a network', async () => {
    let deep: unknown = '%%secret.X%%'
    for (let i = 0; i < 70; i++) deep = [deep]
    const text = JSON.stringify({version: '0.1', type: 'container', ops: [], meta: deep})
    const {report} = await checkDefinitionText(text, 'job.json', {network: 'devnet'})
    assert.equal(report.valid, false)
    assert.deepEqual(
      report.errors.map((e) => e.code),
      ['too_deep'],
    )
    assert.deepEqual(report.warnings, [])
    assert.equal(report.network, undefined)
  })

  it('reads files and standard input as text, refusing binary data without echoing it', async () => {
    const good = join(dir, 'job.json')
    await writeFile(good, WARNED)
    assert.deepEqual(await readDefinitionText(good, noStdin), {text: WARNED})
    assert.deepEqual(await readDefinitionText('-', async () => 'from stdin'), {text: 'from stdin'})
    assert.deepEqual(await readDefinitionText('-', async () => new TextEncoder().encode('bytes')), {text: 'bytes'})
    const binary = join(dir, 'image.bin')
    await writeFile(binary, Buffer.from([0x7b, 0x00, 0x7d]))
    assert.deepEqual(await readDefinitionText(binary, noStdin), {
      problem: {
        code: 'not_text',
        message: `${binary} is not a text file (it holds binary data): a job definition is JSON or YAML text`,
      },
    })
    const latin1 = join(dir, 'latin1.json')
    await writeFile(latin1, Buffer.from([0x7b, 0xe9, 0x7d]))
    assert.equal(problemOf(await readDefinitionText(latin1, noStdin))?.code, 'not_text')
    assert.deepEqual(await readDefinitionText('-', async () => 'a\0b'), {
      problem: {
        code: 'not_text',
        message: 'standard input is not a text file (it holds binary data): a job definition is JSON or YAML text',
      },
    })
    assert.deepEqual(await readDefinitionText(join(dir, 'missing.json'), noStdin), {
      problem: {code: 'unreadable', message: `cannot read ${join(dir, 'missing.json')}: no such file`},
    })
    assert.equal(
      problemOf(await readDefinitionText(dir, noStdin))?.message,
      `cannot read ${dir}: it is a directory, not a file`,
    )
  })

  it('a file it cannot read is reported as that file, and standard input is named <stdin>', async () => {
    const missing = join(dir, 'nope.json')
    assert.deepEqual((await checkDefinitionFile(missing, noStdin)).report, {
      file: missing,
      valid: false,
      errors: [
        {
          path: '',
          pointer: '',
          code: 'unreadable',
          message: `cannot read ${missing}: no such file`,
          line: 0,
          column: 0,
        },
      ],
      warnings: [],
    })
    const fromStdin = await checkDefinitionFile('-', async () => WARNED)
    assert.equal(fromStdin.report.file, '<stdin>')
    assert.equal(fromStdin.report.valid, true)
  })

  it('read errors in words', () => {
    const coded = (code: string) => Object.assign(new Error(`raw ${code}`), {code})
    assert.equal(describeReadError(coded('ENOENT')), 'no such file')
    assert.equal(describeReadError(coded('EACCES')), 'permission denied')
    assert.equal(describeReadError(coded('EPERM')), 'permission denied')
    assert.equal(describeReadError(coded('EISDIR')), 'it is a directory, not a file')
    assert.equal(describeReadError(coded('EIO')), 'raw EIO')
    assert.equal(describeReadError('plain'), 'plain')
    // A rejection without an error object (a caller's readStdin may reject with anything) is still words.
    assert.equal(describeReadError(undefined), 'undefined')
    assert.equal(describeReadError(null), 'null')
  })
})
