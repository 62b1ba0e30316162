/** Parser errors in gpunet's words, each exit 2 with a hint, "did you mean" for typos (issue 25). */
import {strict as assert} from 'node:assert'

import {closest} from '../../src/cli/suggest.js'
import {runCli} from '../helpers/cli.js'

describe('usage errors', function () {
  this.timeout(60_000)

  const cases: {argv: string[]; message: string; hint: RegExp}[] = [
    {argv: ['job', 'post', '--fiel', 'x'], message: 'unknown flag --fiel', hint: /^did you mean --file\? /},
    {
      argv: ['secrets', 'get', '--netwrk', 'devnet'],
      message: 'unknown flag --netwrk',
      hint: /^did you mean --network\?/,
    },
    {argv: ['job', 'post', '--zzzzzz'], message: 'unknown flag --zzzzzz', hint: /^run the command with --help/},
    {argv: ['job', 'extend', 'abc'], message: 'missing the required flag --timeout', hint: /--help/},
    {
      argv: ['job', 'post', 'x.json', '--timeout', 'abc'],
      message: '--timeout must be a duration such as 600 (seconds), 90s, 10m or 2h, not "abc"',
      hint: /--help/,
    },
    {
      argv: ['job', 'post', 'x.json', '--timeout', '0'],
      message: '--timeout must be at least 1 s, not "0"',
      hint: /--help/,
    },
    {
      argv: ['job', 'get', 'x', '--wait-for', 'redy'],
      message: '--wait-for must be one of running, ready, done, not "redy"',
      hint: /^did you mean --wait-for ready\?$/,
    },
    {argv: ['job', 'get'], message: 'missing JOB (job address)', hint: /--help/},
    {argv: ['job', 'get', 'a', 'b'], message: 'unexpected argument b', hint: /--help/},
    {argv: ['help', 'jb'], message: '"jb" is not a gpunet command or topic', hint: /^did you mean "gpunet help job"\?/},
    {
      argv: ['help', 'job', 'pst'],
      message: '"job pst" is not a gpunet command or topic',
      hint: /"gpunet help job post"/,
    },
  ]
  for (const {argv, message, hint} of cases) {
    it(`${argv.join(' ')}: exit 2, "${message}"`, async () => {
      const text = await runCli(argv)
      assert.equal(text.code, 2, text.stderr)
      assert.equal(text.stdout, '')
      const [error, hintLine] = text.stderr.trimEnd().split('\n')
      assert.equal(error, `Error: ${message}`)
      assert.match(hintLine!.replace(/^Hint: /, ''), hint)
      const json = await runCli([...argv, '--json'])
      assert.equal(json.code, 2)
      const doc = JSON.parse(json.stdout) as {error: {code: string; message: string; hint: string}}
      assert.equal(doc.error.message, message)
      assert.match(doc.error.hint, hint)
      assert.ok(['usage', 'unknown_command'].includes(doc.error.code))
    })
  }

  it('shows a command’s help after its arguments and flag values', async () => {
    for (const argv of [
      ['job', 'get', 'ADDRESS', '--help'],
      ['job', 'post', '--file', 'x.json', '--help'],
    ]) {
      const help = await runCli(argv)
      assert.equal(help.code, 0, help.stderr)
      assert.match(help.stdout, /^USAGE\n/m)
    }
  })

  it('suggests the nearest word only when it is near', () => {
    assert.equal(closest('--fiel', ['--file', '--force']), '--file')
    assert.equal(closest('redy', ['running', 'ready', 'done'], 1), 'ready')
    assert.equal(closest('zzzzzz', ['running', 'ready', 'done'], 1), undefined)
    assert.equal(closest('x', []), undefined)
  })
})
