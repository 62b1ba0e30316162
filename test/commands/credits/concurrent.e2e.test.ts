/**
 * Credit posts at once on the localnet (issue 61, "Local denial"): a burst of `POST /api/jobs/list` whose credits
 * cover them all is answered from the owner's credits, every one 200 and listed on the chain, not refused 402
 * because the localnet's own credits wallet, topped up per request, was drained by the others of that moment.
 */
import {strict as assert} from 'node:assert'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {runCli} from '../../helpers/cli.js'
import {type CliSandbox, cliSandbox} from '../../helpers/cli-localnet.js'

describe('credit posts at once on the localnet (end to end)', function () {
  this.timeout(300_000)
  let box: CliSandbox
  let env: NodeJS.ProcessEnv
  let manager: string
  let key = ''

  const cli = (args: string[]) => runCli(args, {env: {...env, GPUNET_API_KEY: key}, cwd: box.dir})
  const json = async <T = unknown>(args: string[]): Promise<T> => {
    const result = await cli([...args, '--json'])
    assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}${result.stdout}`)
    return JSON.parse(result.stdout) as T
  }

  before(async function () {
    this.timeout(120_000)
    box = cliSandbox()
    env = {...box.env, GPUNET_GATEWAY_PORT: '0'}
    const started = await json<{deploymentManager: string}>(['localnet', 'start', '--detach', '--runtime', 'host'])
    manager = started.deploymentManager
    key = (await json<{key: string}>(['deployment', 'api-key', 'create', '--name', 'burst'])).key
    writeFileSync(
      join(box.dir, 'job.json'),
      JSON.stringify({
        version: '0.1',
        type: 'container',
        ops: [{id: 'svc', type: 'container/run', args: {image: 'ubuntu', cmd: ['true']}}],
      }),
    )
  })
  after(async () => {
    await box?.cleanup()
  })

  it('40 posts at once, credits for ~200: every one answered 200 and a job of its own', async () => {
    await json(['localnet', 'fund', '--credits', '2'])
    const first = await json<{job: string; definition: string; market: string; credits: {charged: {amount: number}}}>([
      'job',
      'post',
      'job.json',
      '--credits',
      '--timeout',
      '60',
    ])
    // Credits for about 200 more jobs like the first (credits are whole numbers here).
    await json(['localnet', 'fund', '--credits', String(Math.ceil(first.credits.charged.amount * 200) + 1)])
    const body = JSON.stringify({ipfsHash: first.definition, market: first.market, timeout: 60})
    const answers = await Promise.all(
      Array.from({length: 40}, async () => {
        const response = await fetch(`${manager}/api/jobs/list`, {
          method: 'POST',
          headers: {'content-type': 'application/json', authorization: `Bearer ${key}`},
          body,
        })
        return {status: response.status, body: (await response.json()) as {job?: string; error?: {code: string}}}
      }),
    )
    const refused = answers.filter((a) => a.status !== 200)
    assert.deepEqual(
      refused.map((a) => `${a.status} ${a.body.error?.code}`),
      [],
      `${refused.length} of 40 refused`,
    )
    assert.equal(new Set(answers.map((a) => a.body.job)).size, 40)
  })
})
