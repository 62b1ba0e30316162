import {strict as assert} from 'node:assert'
import {mkdtemp, rm, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {runCli} from '../../helpers/cli.js'

const VALID = JSON.stringify(
  {version: '0.1', type: 'container', ops: [{id: 'a', type: 'container/run', args: {image: 'ubuntu', cmd: 'echo hi'}}]},
  null,
  2,
)
const INVALID = `{
  "version": "0.1",
  "type": "container",
  "ops": [
    {"id": "a", "type": "container/run", "args": {"imgae": "ubuntu", "env": {"HF_TOKEN": "hf_abcdefghijklmnopqrstuvwx"}}}
  ]
}
`

describe('gpunet job validate', () => {
  let dir: string
  let valid: string
  let invalid: string
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gpunet-validate-'))
    valid = join(dir, 'valid.json')
    invalid = join(dir, 'invalid.json')
    await writeFile(valid, VALID)
    await writeFile(invalid, INVALID)
    await writeFile(
      join(dir, 'job.yaml'),
      'version: "0.1"\ntype: container\nops:\n  - id: a\n    type: container/run\n    args: {image: ubuntu}\n',
    )
    await writeFile(join(dir, 'broken.json'), '{"version": "0.1",\n  "ops": [}\n')
  })
  after(() => rm(dir, {recursive: true, force: true}))

  it('exits 0 and says so for a valid file', async () => {
    const r = await runCli(['job', 'validate', valid])
    assert.equal(r.code, 0)
    assert.equal(r.stdout, `✔ ${valid} is a valid job definition\n`)
    assert.equal(r.stderr, '')
  })

  it('prints file:line:column, path and message per problem, with a code frame, and exits 3', async () => {
    const r = await runCli(['job', 'validate', invalid])
    assert.equal(r.code, 3)
    assert.equal(r.stderr, '')
    const lines = r.stdout.split('\n')
    assert.ok(lines.includes(`${invalid}:5:42  ops[0].args.image  missing required field \`image\``), r.stdout)
    assert.ok(
      lines.includes(`${invalid}:5:51  ops[0].args.imgae  unknown field \`imgae\`; did you mean \`image\`?`),
      r.stdout,
    )
    assert.ok(
      lines.some((l) => l.startsWith(`${invalid}:5:`) && l.includes('warning: env value `HF_TOKEN`')),
      r.stdout,
    )
    assert.ok(
      lines.some((l) => /^\s+> 5 \|/.test(l)),
      'code frame',
    )
    assert.ok(lines.includes(`✖ ${invalid}: 2 errors, 1 warning`))
  })

  it('--json prints one document with valid, errors and warnings per file', async () => {
    const r = await runCli(['job', 'validate', valid, invalid, '--json'])
    assert.equal(r.code, 3)
    const doc = JSON.parse(r.stdout)
    assert.equal(doc.valid, false)
    assert.deepEqual(
      doc.files.map((f: {file: string; valid: boolean}) => [f.file, f.valid]),
      [
        [valid, true],
        [invalid, false],
      ],
    )
    const unknown = doc.files[1].errors.find((e: {code: string}) => e.code === 'unknown_field')
    assert.deepEqual(unknown, {
      path: 'ops[0].args.imgae',
      pointer: '/ops/0/args/imgae',
      code: 'unknown_field',
      message: 'unknown field `imgae`; did you mean `image`?',
      line: 5,
      column: 51,
    })
    assert.equal(doc.files[1].warnings[0].code, 'inline_credential')
  })

  it('reads YAML and standard input', async () => {
    const yaml = await runCli(['job', 'validate', join(dir, 'job.yaml')])
    assert.equal(yaml.code, 0, yaml.stdout)
    const stdin = await runCli(['job', 'validate', '-', '--json'], {stdin: VALID})
    assert.equal(stdin.code, 0)
    assert.equal(JSON.parse(stdin.stdout).files[0].file, '<stdin>')
  })

  it('reports syntax errors and unreadable files with their own message, and exits 3', async () => {
    const r = await runCli(['job', 'validate', join(dir, 'broken.json'), join(dir, 'missing.json')])
    assert.equal(r.code, 3)
    assert.match(r.stdout, /broken\.json:2:11 {2}invalid JSON: expected a value/)
    assert.match(r.stdout, /missing\.json {2}cannot read .*missing\.json: no such file/)
    const dirAsFile = await runCli(['job', 'validate', dir, '--json'])
    assert.equal(dirAsFile.code, 3)
    assert.match(JSON.parse(dirAsFile.stdout).files[0].errors[0].message, /it is a directory/)
  })

  it('clips code frames of a 50 MB one-line file to a window around the column: the output stays small', async function () {
    this.timeout(60_000)
    const big = join(dir, 'one-line.json')
    const filler = 'A'.repeat(50_000_000)
    const text = `{"version":"0.1","type":"container","ops":[{"id":"a","type":"container/run","args":{"image":"x","imgae":"${filler}"}}],"bogus":1}`
    await writeFile(big, text)
    const r = await runCli(['job', 'validate', big])
    assert.equal(r.code, 3)
    assert.ok(r.stdout.length < 2000, `${r.stdout.length} characters of output`)
    const lines = r.stdout.split('\n')
    const marked = lines.filter((l) => /^\s+> 1 \|/.test(l))
    assert.equal(marked.length, 2, r.stdout)
    for (const line of marked) assert.ok(line.length <= 180, `${line.length}: ${line}`)
    // The last member sits 50 MB into the line: its frame starts with an ellipsis and shows the member.
    assert.match(marked[1]!, /^\s+> 1 \| …A+"}}],"bogus":1}$/)
    const caret = lines[lines.indexOf(marked[1]!) + 1]!
    assert.equal(caret.indexOf('^'), marked[1]!.indexOf('"bogus"'))
    const json = await runCli(['job', 'validate', big, '--json'])
    assert.ok(json.stdout.length < 2000, `${json.stdout.length} characters of --json output`)
    assert.equal(JSON.parse(json.stdout).files[0].errors[1].column, text.indexOf('"bogus"') + 1)
  })

  it('refuses a binary file as "not a text file" (exit 3) without echoing it, in both modes and on stdin', async () => {
    const binary = join(dir, 'binary.json')
    const bytes = Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x01, 0x00, 0x1b, 0x5b, 0x32, 0x4a, 0x7b, 0x22])
    await writeFile(binary, bytes)
    const r = await runCli(['job', 'validate', binary])
    assert.equal(r.code, 3)
    assert.equal(
      r.stdout,
      `${binary}  ${binary} is not a text file (it holds binary data): a job definition is JSON or YAML text\n✖ ${binary}: 1 error\n`,
    )
    for (const echoed of ['ELF', '\u001b', '\0']) assert.ok(!(r.stdout + r.stderr).includes(echoed))
    const json = await runCli(['job', 'validate', '-', '--json'], {stdin: bytes.toString('latin1')})
    assert.equal(json.code, 3)
    assert.deepEqual(JSON.parse(json.stdout).files[0].errors[0].code, 'not_text')
    // Not UTF-8 (Latin-1 bytes) is binary too; a job post refuses it the same way, before anything is read remotely.
    const latin1 = join(dir, 'latin1.json')
    await writeFile(latin1, Buffer.from('{"version": "0.1", "caf\xe9": 1}', 'latin1'))
    const post = await runCli(['job', 'post', '--file', latin1, '--json'])
    assert.equal(post.code, 3)
    assert.equal(JSON.parse(post.stdout).error.code, 'not_text')
  })

  it('--strict makes warnings fail the file (exit 3)', async () => {
    const withWarning = join(dir, 'warn.json')
    const doc = JSON.parse(VALID)
    doc.ops[0].args.env = {API_KEY: 'abc123'}
    await writeFile(withWarning, JSON.stringify(doc))
    const relaxed = await runCli(['job', 'validate', withWarning])
    assert.equal(relaxed.code, 0)
    assert.match(relaxed.stdout, /is a valid job definition \(1 warning\)/)
    const strict = await runCli(['job', 'validate', '--strict', withWarning, '--json'])
    assert.equal(strict.code, 3)
    const report = JSON.parse(strict.stdout).files[0]
    assert.equal(report.valid, false)
    assert.deepEqual(report.errors, [])
    assert.equal(report.warnings[0].code, 'inline_credential')
  })

  describe('--network', () => {
    const write = async (name: string, value: unknown) => {
      const file = join(dir, name)
      await writeFile(file, JSON.stringify(value, null, 2))
      return file
    }
    const op = (args: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
      version: '0.1',
      type: 'container',
      ops: [{id: 'a', type: 'container/run', ...extra, args: {image: 'ubuntu', ...args}}],
    })

    it("exits 3 naming a spec-valid member the network's nodes refuse; the spec alone still passes it", async () => {
      const file = await write('output.json', op({output: '/out'}))
      assert.equal((await runCli(['job', 'validate', file])).code, 0)
      const result = await runCli(['job', 'validate', '--network', 'devnet', '--no-frames', file])
      assert.equal(result.code, 3)
      assert.match(result.stdout, /ops\[0\]\.args\.output {2}the network's nodes no longer read `output`/)
      assert.match(result.stdout, /devnet's nodes would refuse it: 1 error/)
      const json = await runCli(['job', 'validate', '--network', 'mainnet', '--json', file])
      const report = JSON.parse(json.stdout) as {files: {errors: {code: string}[]; network: {accepted: boolean}}[]}
      assert.equal(report.files[0]!.errors[0]!.code, 'no_network_equivalent')
      assert.equal(report.files[0]!.network.accepted, false)
    })

    it('accepts a translated job, listing what changed and the verdicts', async () => {
      const check = {type: 'http', path: '/', method: 'GET', expected_status: 200}
      const file = await write('health.json', op({expose: [{port: 80, health_checks: [check]}]}))
      const result = await runCli(['job', 'validate', '--network', 'mainnet', file])
      assert.equal(result.code, 0, result.stdout)
      assert.match(
        result.stdout,
        /in the network's form: ops\[0\]\.args\.expose\[0\]\.health_checks each gained `continuous: false`/,
      )
      assert.match(
        result.stdout,
        /mainnet's nodes would run it \(spec 0\.1: valid; .*@nosana\/types 2\.1\.6: accepted\)/,
      )
    })

    it("accepts the network's newer format on devnet with a warning per member, and refuses on localnet what its node cannot run (exit 3)", async () => {
      const file = await write('newer.json', op({}, {execution: {group: 'main'}}))
      assert.equal((await runCli(['job', 'validate', file])).code, 3, 'beyond spec 0.1')
      const devnet = await runCli(['job', 'validate', '--network', 'devnet', file])
      assert.equal(devnet.code, 0, devnet.stdout)
      assert.match(devnet.stdout, /ops\[0\]\.execution {2}warning: goes beyond spec 0\.1/)
      // Groups run on the localnet's node (issue 39); `private` needs the network's tunnel.
      const runs = await runCli(['job', 'validate', '--network', 'localnet', '--no-frames', file])
      assert.equal(runs.code, 0, runs.stdout)
      const privateFile = await write('private.json', op({private: true}, {execution: {group: 'main'}}))
      const localnet = await runCli(['job', 'validate', '--network', 'localnet', '--no-frames', privateFile])
      assert.equal(localnet.code, 3)
      assert.match(localnet.stdout, /ops\[0\]\.args\.private {2}the localnet's node cannot run it/)
      assert.match(localnet.stdout, /the localnet's node would refuse it/)
    })

    it('refuses on every network a depends_on cycle or an unknown id, naming them (exit 3)', async () => {
      const file = await write('cycle.json', {
        version: '0.1',
        type: 'container',
        ops: [
          {id: 'a', type: 'container/run', args: {image: 'x'}, execution: {group: 'g', depends_on: ['b']}},
          {id: 'b', type: 'container/run', args: {image: 'x'}, execution: {group: 'g', depends_on: ['a', 'zz']}},
        ],
      })
      for (const network of ['devnet', 'localnet']) {
        const result = await runCli(['job', 'validate', '--network', network, '--no-frames', file])
        assert.equal(result.code, 3, result.stdout)
        assert.match(
          result.stdout,
          /ops\[1\]\.execution\.depends_on\[1\] {2}names `zz`, which is no operation of this job/,
        )
        assert.match(result.stdout, /goes round in a cycle \(a -> b -> a\)/)
      }
    })
  })

  it('exits 2 with a usage error when no file is given', async () => {
    const r = await runCli(['job', 'validate'])
    assert.equal(r.code, 2)
    assert.equal(r.stdout, '')
    assert.match(r.stderr, /^Error: missing FILE/)
    const json = await runCli(['job', 'validate', '--json'])
    assert.equal(json.code, 2)
    assert.equal(JSON.parse(json.stdout).error.code, 'usage')
  })

  it('exits 2 for an unknown flag', async () => {
    const r = await runCli(['job', 'validate', valid, '--bogus'])
    assert.equal(r.code, 2)
    assert.match(r.stderr, /^Error: unknown flag --bogus$/m)
  })
})
