/** Shell completion (issue 25): scripts written at build time from the command manifest, run here in bash. */
import {strict as assert} from 'node:assert'
import {execFileSync} from 'node:child_process'

import {runCli} from '../helpers/cli.js'

describe('gpunet completion', function () {
  this.timeout(60_000)
  let bash = ''

  before(async () => {
    const printed = await runCli(['completion', 'bash'])
    assert.equal(printed.code, 0, printed.stderr)
    bash = printed.stdout
  })

  /** What bash completes for the words typed (the last one being completed). */
  function complete(line: string): string[] {
    const words = line.split(' ')
    const script = `${bash}
COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')})
COMP_CWORD=${words.length - 1}
_gpunet
printf '%s\\n' "\${COMPREPLY[@]}"`
    return execFileSync('bash', ['-c', script], {encoding: 'utf8'}).split('\n').filter(Boolean).sort()
  }

  it('completes topics, commands, flags and the values of listed flags', () => {
    assert.deepEqual(complete('gpunet jo'), ['job'])
    assert.deepEqual(complete('gpunet job po'), ['post'])
    assert.deepEqual(complete('gpunet localnet st'), ['start', 'status', 'stop'])
    assert.ok(complete('gpunet job post --').includes('--file'))
    assert.ok(complete('gpunet job post --').includes('--no-logs'), 'the negation of a flag that has one')
    assert.deepEqual(complete('gpunet job post --fi'), ['--file'])
    assert.deepEqual(complete('gpunet job get ADDRESS --wait-for r'), ['ready', 'running'])
    assert.deepEqual(complete('gpunet localnet start --runtime '), ['auto', 'host', 'podman'])
    assert.deepEqual(complete('gpunet job post --network '), ['devnet', 'localnet', 'mainnet'])
  })

  it('completes the template names of job init --template (and -t)', async () => {
    const names = (
      JSON.parse((await runCli(['job', 'init', '--json'])).stdout) as {templates: {name: string}[]}
    ).templates
      .map((t) => t.name)
      .sort()
    assert.ok(names.includes('hello-world'))
    assert.deepEqual(complete('gpunet job init --template '), names)
    assert.deepEqual(complete('gpunet job init -t hello'), ['hello-world'])
    const fish = await runCli(['completion', 'fish'])
    assert.match(fish.stdout, /^complete -c gpunet -n '__gpunet_in job init' -l template -s t -x -a '[^']*hello-world/m)
  })

  it('prints zsh (through bashcompinit) and fish scripts from the same manifest, and refuses another shell', async () => {
    const zsh = await runCli(['completion', 'zsh'])
    assert.equal(zsh.code, 0)
    assert.match(zsh.stdout, /bashcompinit/)
    assert.match(zsh.stdout, /complete -o default -F _gpunet gpunet/)
    const fish = await runCli(['completion', 'fish'])
    assert.equal(fish.code, 0)
    assert.match(fish.stdout, /^complete -c gpunet -n '__gpunet_at job' -a 'post' -d 'Post a job/m)
    assert.match(
      fish.stdout,
      /^complete -c gpunet -n '__gpunet_in localnet start' -l runtime -x -a 'auto podman host'/m,
    )
    const tcsh = await runCli(['completion', 'tcsh'])
    assert.equal(tcsh.code, 2)
    assert.match(tcsh.stderr, /^Error: "tcsh" is not one of bash, zsh, fish$/m)
  })
})
