import {strict as assert} from 'node:assert'
import {readFileSync} from 'node:fs'

import {runCli} from '../helpers/cli.js'

describe('gpunet (root)', () => {
  it('--help lists the topics', async () => {
    const r = await runCli(['--help'])
    assert.equal(r.code, 0)
    const topics = r.stdout.slice(r.stdout.indexOf('TOPICS\n'))
    for (const topic of ['config', 'job', 'localnet', 'market', 'secrets', 'wallet']) {
      assert.match(topics, new RegExp(`^ {2}${topic} +\\S`, 'm'), topic)
    }
  })

  it('--version prints name, version, platform and Node, as oclif words it', async () => {
    const r = await runCli(['--version'])
    assert.equal(r.code, 0)
    assert.equal(r.stderr, '')
    const {version} = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version: string
    }
    assert.equal(r.stdout, `gpunet/${version} ${process.platform}-${process.arch} node-${process.version}\n`)
  })

  it('`help TOPIC` shows that topic’s help', async () => {
    const r = await runCli(['help', 'job'])
    assert.equal(r.code, 0)
    assert.match(r.stdout, /job validate\s+Check job definition files/)
  })

  it('help --json describes every command, a topic’s commands, or one command, with flags and examples', async () => {
    type Doc = {
      commands: {id: string; args: {name: string}[]; flags: {name: string; type: string}[]; examples: string[]}[]
    }
    const all = await runCli(['help', '--json'])
    assert.equal(all.code, 0)
    const ids = (JSON.parse(all.stdout) as Doc).commands.map((c) => c.id)
    assert.ok(
      ['job post', 'job validate', 'localnet start', 'market list', 'secrets serve'].every((id) => ids.includes(id)),
    )
    assert.deepEqual(ids, [...ids].sort())

    const topic = JSON.parse((await runCli(['help', 'secrets', '--json'])).stdout) as Doc
    assert.ok(topic.commands.length > 1 && topic.commands.every((c) => c.id.startsWith('secrets ')))

    for (const argv of [
      ['job', 'post', '--help', '--json'],
      ['help', 'job', 'post', '--json'],
    ]) {
      const one = await runCli(argv)
      assert.equal(one.code, 0, one.stderr)
      const [post, ...rest] = (JSON.parse(one.stdout) as Doc).commands
      assert.deepEqual(rest, [])
      assert.equal(post!.id, 'job post')
      assert.equal(post!.flags.find((f) => f.name === 'wait-for')?.type, 'option')
      assert.ok(post!.flags.some((f) => f.name === 'dry-run' && f.type === 'boolean'))
      assert.ok(post!.examples.length > 0 && post!.examples.every((e) => e.startsWith('gpunet job post')))
    }

    const unknown = await runCli(['help', 'jobx', '--json'])
    assert.equal(unknown.code, 2)
    assert.deepEqual(JSON.parse(unknown.stdout), {
      error: {
        code: 'unknown_command',
        message: '"jobx" is not a gpunet command or topic',
        hint: 'did you mean "gpunet help job"? Or run "gpunet help --json" for every command',
      },
    })
    // Without --json, help stays oclif's text.
    assert.match((await runCli(['job', 'post', '--help'])).stdout, /^USAGE\n {2}\$ gpunet job post/m)
  })

  it('an unknown command is a usage error (exit 2) with a suggestion, in both modes', async () => {
    const r = await runCli(['job', 'valdate', 'x.json'])
    assert.equal(r.code, 2)
    assert.equal(r.stdout, '')
    assert.equal(
      r.stderr,
      'Error: "job valdate x.json" is not a gpunet command\nHint: did you mean "gpunet job validate"? Run "gpunet --help" for all commands.\n',
    )
    const json = await runCli(['frobnicate', '--json'])
    assert.equal(json.code, 2)
    assert.deepEqual(JSON.parse(json.stdout), {
      error: {
        code: 'unknown_command',
        message: '"frobnicate" is not a gpunet command',
        hint: 'run "gpunet --help" for all commands',
      },
    })
  })

  it('a misspelt topic gets "did you mean" too: the topic, or the command in it', async () => {
    const topic = await runCli(['jobb'])
    assert.equal(topic.code, 2)
    assert.equal(
      topic.stderr,
      'Error: "jobb" is not a gpunet command\nHint: did you mean "gpunet job"? Run "gpunet --help" for all commands.\n',
    )
    const command = await runCli(['secrts', 'gt', '--json'])
    assert.equal(command.code, 2)
    assert.match(JSON.parse(command.stdout).error.hint, /^did you mean "gpunet secrets get"\?/)
    assert.match((await runCli(['lcoalnet'])).stderr, /did you mean "gpunet localnet"\?/)
  })

  it('two letters swapped are one typo: job pots is job post, jbo and help jbo are job', async () => {
    assert.match((await runCli(['job', 'pots'])).stderr, /Hint: did you mean "gpunet job post"\?/)
    assert.match((await runCli(['jbo'])).stderr, /Hint: did you mean "gpunet job"\?/)
    const help = await runCli(['help', 'jbo'])
    assert.equal(help.code, 2)
    assert.match(help.stderr, /Hint: did you mean "gpunet help job"\?/)
  })

  it('--version prints the user agent line, and one JSON document with --json', async () => {
    const human = await runCli(['--version'])
    assert.equal(human.code, 0)
    assert.match(human.stdout, /^gpunet\/\d+\.\d+\.\d+ \S+ node-v\d+/)
    for (const args of [
      ['--version', '--json'],
      ['--json', '--version'],
    ]) {
      const json = await runCli(args)
      assert.equal(json.code, 0)
      assert.equal(json.stderr, '')
      const doc = JSON.parse(json.stdout) as Record<string, string>
      assert.deepEqual(Object.keys(doc), ['name', 'version', 'node', 'platform', 'arch'])
      assert.equal(doc.name, 'gpunet')
      assert.equal(doc.node, process.version)
      assert.match(human.stdout, new RegExp(`^gpunet/${doc.version!.replaceAll('.', '\\.')} `))
    }
  })

  it('job post and job get --help document their exit codes, 8 and 9 included', async () => {
    for (const command of ['post', 'get']) {
      const help = await runCli(['job', command, '--help'])
      assert.equal(help.code, 0)
      assert.match(help.stdout, /EXIT CODES\n/)
      assert.match(help.stdout, /^ {2}8 {4}--wait saw the job end failed/m)
      assert.match(help.stdout, /^ {2}9 {4}--wait saw the job stopped before it finished/m)
      assert.match(help.stdout, /^ {2}124 {2}--wait ran out of time/m)
      assert.match(help.stdout, /^ {2}130 {2}.*Ctrl\+C during --wait \(the job goes on\)$/m)
      assert.match(help.stdout, /^ {2}143 {2}SIGTERM during --wait, as CI cancels \(the job goes on\)$/m)
    }
  })

  it("job get --help names the states as the chain writes them: a poster's stop of a running job is COMPLETED", async () => {
    const help = (await runCli(['job', 'get', '--help'])).stdout.replace(/\s+/g, ' ')
    assert.match(
      help,
      /or its poster stopped it while it ran, leaving no result\) or STOPPED \(its node gave it up, or its poster delisted it while queued/,
    )
    assert.doesNotMatch(help, /STOPPED \(its poster stopped/)
  })
})
