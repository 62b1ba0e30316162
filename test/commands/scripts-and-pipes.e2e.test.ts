/**
 * The CLI in scripts and pipes (issue 44): `job run` takes its command word for word from after `--`, and no
 * positional argument is ever filled from piped stdin, which only the documented readers read.
 */
import {Keypair} from '@solana/web3.js'
import bs58 from 'bs58'
import {strict as assert} from 'node:assert'
import {spawnSync} from 'node:child_process'
import {readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'

import {BIN, type CliResult, runCli} from '../helpers/cli.js'
import {type CliSandbox, useCliSandbox} from '../helpers/cli-localnet.js'

interface RunReport {
  jobDefinition: {ops: {args: {cmd?: string[]; env?: Record<string, string>; expose?: unknown}}[]}
  timeout: number
}

const MANIFEST = fileURLToPath(new URL('../../oclif.manifest.json', import.meta.url))

describe('the CLI in scripts and pipes', function () {
  this.timeout(120_000)
  const box: CliSandbox = useCliSandbox()
  const cli = (args: string[], stdin?: string) => runCli(args, {env: box.env, stdin})

  before(async () => {
    const started = await cli(['localnet', 'start', '--detach', '--json'])
    assert.equal(started.code, 0, started.stderr)
  })

  describe('job run takes the command from after the first --, word for word', () => {
    // Each case: gpunet's words, the command's words. The built definition's cmd must be the command exactly.
    const cases: {name: string; flags: string[]; command: string[]; check?: (report: RunReport) => void}[] = [
      {
        name: 'a flag value equal to a command word',
        flags: ['--timeout', '60', '--wait'],
        command: ['echo', '60'],
        check: (report) => assert.equal(report.timeout, 60),
      },
      {
        name: 'a port equal to a command word',
        flags: ['--expose', '8080'],
        command: ['httpd', '-p', '8080'],
        check: (report) => assert.equal(JSON.stringify(report.jobDefinition.ops[0]!.args.expose), '8080'),
      },
      {
        name: 'an --env value equal to a command word',
        flags: ['--env', 'A=1'],
        command: ['echo', 'A=1'],
        check: (report) => assert.deepEqual(report.jobDefinition.ops[0]!.args.env, {A: '1'}),
      },
      {name: "gpunet's own flag inside the command", flags: ['--json'], command: ['tool', '--json', 'out.json']},
      {name: 'a -- inside the command', flags: [], command: ['sh', '-c', 'echo "$@"', '--', '--', 'x']},
      {
        name: 'quoting, spaces, an empty word and shell characters',
        flags: ['--env', 'B=two words'],
        command: ['printf', '%s|\\n', "it's", 'a  b', '', '$HOME', '"q"', '--env', 'B=two words'],
      },
      {name: 'a repeated --env with the same value', flags: ['--env', 'A=1', '--env', 'C=1'], command: ['1', 'A=1']},
    ]
    for (const {name, flags, command, check} of cases) {
      it(name, async () => {
        const args = ['job', 'run', '--dry-run', '--queue-anyway', ...flags, '--json', '--', ...command]
        const result = await cli(args)
        assert.equal(result.code, 0, result.stderr + result.stdout)
        const report = JSON.parse(result.stdout) as RunReport
        assert.deepEqual(report.jobDefinition.ops[0]!.args.cmd, command)
        check?.(report)
      })
    }

    it('refuses command words before -- (exit 2), before anything is paid, naming them', async () => {
      for (const args of [
        ['echo', 'hi'],
        ['--image', 'docker.io/library/busybox:1', 'echo', '--', 'hi'],
      ]) {
        const result = await cli(['job', 'run', '--dry-run', ...args])
        assert.equal(result.code, 2, result.stderr)
        assert.match(result.stderr, /^Error: echo( hi)?: the command to run goes after --$/m)
        assert.match(result.stderr, /^Hint: put gpunet's flags first .*-- echo hi$/m)
        assert.equal(result.stdout, '')
      }
    })
  })

  describe('piped stdin never fills a positional argument', () => {
    const someAddress = Keypair.generate().publicKey.toBase58()
    // Every command with a positional argument, run without it: stdin carries what would be a valid value for the
    // argument if it were taken from there. The documented readers (below) are the only ones that read it.
    const withoutArgument: Record<string, {args: string[]; stdin: string}> = {
      completion: {args: ['completion'], stdin: 'bash\n'},
      'config:get': {args: ['config', 'get'], stdin: 'rpcUrl\n'},
      'config:set': {args: ['config', 'set', 'rpcUrl'], stdin: 'https://piped.example.org\n'},
      'config:unset': {args: ['config', 'unset'], stdin: 'rpcUrl\n'},
      'deployment:api-key:revoke': {args: ['deployment', 'api-key', 'revoke'], stdin: '1\n'},
      'deployment:autoscale': {args: ['deployment', 'autoscale', '--off'], stdin: `${someAddress}\n`},
      'deployment:delete': {args: ['deployment', 'delete', '--yes'], stdin: `${someAddress}\n`},
      'deployment:duplicate': {args: ['deployment', 'duplicate'], stdin: `${someAddress}\n`},
      'deployment:events': {args: ['deployment', 'events'], stdin: `${someAddress}\n`},
      'deployment:fund': {args: ['deployment', 'fund', '--sol', '1'], stdin: `${someAddress}\n`},
      'deployment:get': {args: ['deployment', 'get'], stdin: `${someAddress}\n`},
      'deployment:jobs': {args: ['deployment', 'jobs'], stdin: `${someAddress}\n`},
      'deployment:logs': {args: ['deployment', 'logs'], stdin: `${someAddress}\n`},
      'deployment:move': {args: ['deployment', 'move', '--market', someAddress], stdin: `${someAddress}\n`},
      'deployment:revise': {args: ['deployment', 'revise', '--file', 'job.json'], stdin: `${someAddress}\n`},
      'deployment:scale': {args: ['deployment', 'scale'], stdin: `${someAddress}\n`},
      'deployment:start': {args: ['deployment', 'start'], stdin: `${someAddress}\n`},
      'deployment:stop': {args: ['deployment', 'stop', '--yes'], stdin: `${someAddress}\n`},
      'deployment:withdraw': {args: ['deployment', 'withdraw', '--yes'], stdin: `${someAddress}\n`},
      'job:extend': {args: ['job', 'extend', '--timeout', '60'], stdin: `${someAddress}\n`},
      'job:get': {args: ['job', 'get'], stdin: `${someAddress}\n`},
      'job:logs': {args: ['job', 'logs'], stdin: `${someAddress}\n`},
      'job:post': {args: ['job', 'post', '--dry-run', '--queue-anyway'], stdin: 'job.json\n'},
      'job:restart': {args: ['job', 'restart', '--op', 'a'], stdin: `${someAddress}\n`},
      'job:stop': {args: ['job', 'stop'], stdin: `${someAddress}\n`},
      'job:exec': {args: ['job', 'exec', '--', 'true'], stdin: `${someAddress}\n`},
      'job:shell': {args: ['job', 'shell'], stdin: `${someAddress}\n`},
      'job:stats': {args: ['job', 'stats'], stdin: `${someAddress}\n`},
      'job:validate': {args: ['job', 'validate'], stdin: 'job.json\n'},
      'localnet:fund': {args: ['localnet', 'fund', '--tokens', '1'], stdin: `${someAddress}\n`},
      'localnet:node:join': {args: ['localnet', 'node', 'join'], stdin: `${someAddress}\n`},
      'localnet:node:leave': {args: ['localnet', 'node', 'leave'], stdin: `${someAddress}\n`},
      'market:get': {args: ['market', 'get'], stdin: `${someAddress}\n`},
      'secrets:delete': {args: ['secrets', 'delete', '--yes'], stdin: 'PIPED\n'},
      'secrets:get': {args: ['secrets', 'get'], stdin: 'PIPED\n'},
      'secrets:set': {args: ['secrets', 'set', '--value', 'v'], stdin: 'PIPED\n'},
    }
    const documentedReaders = new Set(['wallet:import'])

    it('covers every command that takes a positional argument', () => {
      const manifest = JSON.parse(readFileSync(MANIFEST, 'utf8')) as {commands: Record<string, {args?: object}>}
      const withArgs = Object.entries(manifest.commands)
        .filter(([, command]) => Object.keys(command.args ?? {}).length > 0)
        .map(([id]) => id)
      const covered = new Set([...Object.keys(withoutArgument), ...documentedReaders])
      assert.deepEqual(
        withArgs.filter((id) => !covered.has(id)),
        [],
        'a command with a positional argument is missing here',
      )
    })

    /** A run's output with what differs between two runs (numbers, signatures) masked. */
    const comparable = (result: CliResult) => ({
      code: result.code,
      stdout: mask(result.stdout),
      stderr: mask(result.stderr),
    })

    for (const [id, {args, stdin}] of Object.entries(withoutArgument)) {
      it(`${id.replace(':', ' ')}: stdin a pipe behaves as stdin closed`, async () => {
        writeFileSync(join(box.dir, 'job.json'), '{"version": "0.1"}')
        const closed = await runCli([...args, '--json'], {env: box.env, cwd: box.dir})
        const piped = await runCli([...args, '--json'], {env: box.env, cwd: box.dir, stdin})
        assert.deepEqual(comparable(piped), comparable(closed))
      })
    }

    it('the documented readers still read stdin: `-`, `--file -`, a secret value, a key to import', async () => {
      const definition =
        'version: "0.1"\ntype: container\nops:\n  - id: hi\n    type: container/run\n    args:\n      image: ubuntu\n'
      const validated = await cli(['job', 'validate', '-'], definition)
      assert.equal(validated.code, 0, validated.stdout + validated.stderr)
      const posted = await cli(['job', 'post', '--file', '-', '--dry-run', '--queue-anyway', '--json'], definition)
      assert.equal(posted.code, 0, posted.stdout + posted.stderr)
      assert.equal((JSON.parse(posted.stdout) as {dryRun: boolean}).dryRun, true)

      const set = await cli(['secrets', 'set', 'FROM_PIPE'], 'piped value')
      assert.equal(set.code, 0, set.stderr)
      assert.equal((await cli(['secrets', 'get', 'FROM_PIPE'])).stdout, 'piped value')

      const keypair = Keypair.generate()
      const wallet = join(box.dir, 'imported.json')
      const imported = await cli(['wallet', 'import', '--wallet', wallet, '--json'], bs58.encode(keypair.secretKey))
      assert.equal(imported.code, 0, imported.stderr)
      assert.equal((JSON.parse(imported.stdout) as {address: string}).address, keypair.publicKey.toBase58())
    })

    it('a `while read` loop around gpunet keeps every line', async () => {
      const script = `printf 'a\\nb\\nc\\n' | while read -r word; do "${process.execPath}" "${BIN}" job get >/dev/null 2>&1; echo "$word"; done`
      const looped = spawnSync('sh', ['-c', script], {env: {...process.env, ...box.env}, encoding: 'utf8'})
      assert.equal(looped.stdout, 'a\nb\nc\n')
    })
  })
})

/** Masks digits and transaction signatures, which differ between two runs of one command. */
function mask(text: string): string {
  return text.replace(/[1-9A-HJ-NP-Za-km-z]{80,90}/g, '<signature>').replace(/\d+/g, 'N')
}

describe('the offline path: how the node runs jobs is said, and chosen as asked', function () {
  this.timeout(120_000)
  const box: CliSandbox = useCliSandbox()
  const cli = (args: string[]) => runCli(args, {env: box.env})

  it('--runtime host: says NO isolation when it starts, in the [node] lines and in the report, naming no image', async () => {
    const started = await cli(['localnet', 'start', '--detach', '--runtime', 'host'])
    assert.equal(started.code, 0, started.stderr)
    assert.match(started.stderr, /runs jobs as host processes on this machine, with NO isolation/)
    // It runs for two seconds, so that --wait's live lines (which carry the [node] ones) are connected in time.
    const command = ['sh', '-c', 'sleep 2; echo hi there']
    const ran = await cli(['job', 'run', '--image', 'docker.io/library/nope:1', '--wait', '--', ...command])
    assert.equal(ran.code, 0, ran.stderr)
    assert.match(
      ran.stderr,
      /\[node\] Operation run: starting `sh -c sleep 2; echo hi there` as a host process: NO isolation/,
    )
    assert.doesNotMatch(ran.stderr, /starting docker\.io\/library\/nope:1/)
    assert.match(ran.stdout, /^ {2}Isolation +NONE: the node ran it as host processes/m)
    await cli(['localnet', 'stop'])
  })

  it("--wait is ready once the service itself answers, even 404 at /, and not while it isn't listening", async function () {
    if (spawnSync('busybox', ['true']).status !== 0) {
      if (process.env.CI) assert.fail('busybox is missing, and CI installs it')
      this.skip()
    }
    const started = await cli(['localnet', 'start', '--detach', '--runtime', 'host'])
    assert.equal(started.code, 0, started.stderr)
    // Below Linux's ephemeral range (32768 up), which other tests' connections draw from.
    const port = String(20_000 + Math.floor(Math.random() * 12_000))
    // Listening only after 3 s, with nothing at / (an empty folder): busybox httpd answers 404 there.
    const command = ['sh', '-c', `mkdir -p www && sleep 3 && exec busybox httpd -f -p 127.0.0.1:${port} -h www`]
    const ran = await cli([
      'job',
      'run',
      '--expose',
      port,
      '--wait',
      '--wait-timeout',
      '90',
      '--json',
      '--',
      ...command,
    ])
    const report = JSON.parse(ran.stdout) as {job: string; status: string}
    try {
      assert.equal(ran.code, 0, ran.stderr)
      assert.equal(report.status, 'RUNNING')
      assert.match(ran.stderr, /waiting for its service: .*answered (404|502) from the gateway/)
      assert.doesNotMatch(ran.stderr, /waiting for its service: .*answered 404,/)
    } finally {
      await cli(['job', 'stop', report.job])
      await cli(['localnet', 'stop'])
    }
  })

  it('--host-processes where podman works: says that podman runs the jobs, and how to run them on the host', async function () {
    const started = await cli(['localnet', 'start', '--detach', '--host-processes'])
    assert.equal(started.code, 0, started.stderr)
    const status = JSON.parse((await cli(['localnet', 'status', '--json'])).stdout) as {node: {runtime: string}}
    if (status.node.runtime !== 'podman') {
      assert.match(started.stderr, /NO isolation/)
      if (process.env.CI) assert.fail('podman does not work here, and CI installs it')
      this.skip()
    }
    assert.match(started.stderr, /--host-processes is only a fallback .* podman works here, so jobs run in podman/)
    assert.match(started.stderr, /`--runtime host` runs them on the host/)
  })
})
