/**
 * `localnet start --markets FILE` from the CLI: a bad file is exit 2 with its line and column and nothing started;
 * a chain keeps its markets (another file is refused with the hint to `reset --markets`, which makes a new chain
 * with them, and `reset` alone keeps them); `localnet node leave` and `join` take a node out of its queue and back.
 */
import {strict as assert} from 'node:assert'
import {existsSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import type {LocalnetStatus} from '../../../src/lib/localnet/server/control.js'
import {useCliSandbox} from '../../helpers/cli-localnet.js'
import {runCli} from '../../helpers/cli.js'

const TWO_MARKETS = `markets:
  - slug: localnet
    gpus: [NVIDIA GeForce RTX 3060]
    vram: 12
    price: 0.0001
  - slug: h100
    type: PREMIUM
    gpus: [NVIDIA H100 80GB HBM3]
    vram: 80
    price: 0.002
`

describe('localnet start --markets, reset --markets, node leave and join', function () {
  this.timeout(120_000)
  const box = useCliSandbox()
  const file = (name: string, text: string) => {
    const path = join(box.dir, name)
    writeFileSync(path, text)
    return path
  }
  const status = async () => JSON.parse((await box.run(['localnet', 'status', '--json'])).stdout) as LocalnetStatus

  it('refuses a bad markets file with its line and column, exit 2, and starts nothing', async () => {
    const bad = file('bad.yaml', TWO_MARKETS.replace('    vram: 80\n', '    vram: 80\n    nodes:\n      - vram: 40\n'))
    const result = await box.run(['localnet', 'start', '--detach', '--markets', bad, '--runtime', 'host'])
    assert.equal(result.code, 2)
    assert.equal(
      result.stderr.split('\n')[0],
      `Error: ${bad}:11:15: a node of \`h100\` has 40 GB of VRAM, less than the market's 80 GB (its lowest)`,
    )
    assert.match(result.stderr, /Hint: fix the markets file/)
    assert.equal(existsSync(join(box.dataDir, 'genesis.json')), false, 'no chain was made')
    const json = await box.run([
      'localnet',
      'start',
      '--detach',
      '--json',
      '--markets',
      file('dup.json', JSON.stringify({markets: [{slug: 'localnet', gpus: ['A'], vram: 1, price: 0, colour: 'red'}]})),
    ])
    assert.equal(json.code, 2)
    assert.equal((JSON.parse(json.stdout) as {error: {code: string; line: number}}).error.code, 'markets_file_invalid')
    assert.equal(existsSync(join(box.dataDir, 'localnet.json')), false, 'nothing runs')
  })

  it("opens the file's markets; another file for that chain is refused with the hint to reset --markets", async () => {
    const two = file('two.yaml', TWO_MARKETS)
    const started = await box.run(['localnet', 'start', '--detach', '--json', '--markets', two, '--runtime', 'host'])
    assert.equal(started.code, 0, started.stderr)
    const first = JSON.parse(started.stdout) as LocalnetStatus
    assert.deepEqual(
      first.markets.map((m) => [m.slug, m.nodes]),
      [
        ['localnet', 1],
        ['h100', 1],
      ],
    )
    await box.run(['localnet', 'stop'])
    // Started again with the sandbox's one-market file (its environment): refused, the chain has two markets.
    const refused = await box.run(['localnet', 'start', '--detach', '--runtime', 'host'])
    assert.equal(refused.code, 2)
    assert.match(
      refused.stderr,
      /keeps other markets than .*one-market\.yaml says: a chain keeps its markets across starts/,
    )
    assert.match(refused.stderr, /gpunet localnet reset --markets .*one-market\.yaml/)
    // The same file again: the same markets, at the same addresses.
    const again = await box.run(['localnet', 'start', '--detach', '--json', '--markets', two, '--runtime', 'host'])
    assert.equal(again.code, 0, again.stderr)
    assert.deepEqual((JSON.parse(again.stdout) as LocalnetStatus).markets, first.markets)
  })

  it('node leave takes a node out of its queue, join puts it back', async () => {
    const node = (await status()).nodes.find((n) => n.slug === 'h100')!
    const left = await box.run(['localnet', 'node', 'leave', node.address, '--json'])
    assert.equal(left.code, 0, left.stderr)
    assert.equal((JSON.parse(left.stdout) as {left: boolean}).left, true)
    const market = (await status()).markets.find((m) => m.slug === 'h100')!.address
    const listed = async () =>
      (JSON.parse((await box.run(['market', 'get', market, '--json'])).stdout) as {freeNodes: number}).freeNodes
    assert.equal(await listed(), 0)
    const human = await box.run(['localnet', 'status'])
    assert.match(human.stdout, new RegExp(`${node.address}  h100, left \\(localnet node join\\)`))
    const joined = await box.run(['localnet', 'node', 'join', node.address])
    assert.equal(joined.code, 0, joined.stderr)
    assert.equal(joined.stdout, `Node ${node.address} joined its market again (h100).\n`)
    for (let i = 0; i < 50 && (await listed()) !== 1; i++) await new Promise((r) => setTimeout(r, 100))
    assert.equal(await listed(), 1)
    const unknown = await box.run(['localnet', 'node', 'leave', market])
    assert.equal(unknown.code, 7)
    assert.match(unknown.stderr, /no node .* runs on the localnet/)
  })

  it('reset keeps the markets for the new chain, and reset --markets makes one with those of the file', async () => {
    const before = (await status()).markets
    // Without the sandbox's markets file in the environment: reset alone is asked for.
    const env: NodeJS.ProcessEnv = {...box.env}
    delete env.GPUNET_LOCALNET_MARKETS
    const reset = await runCli(['localnet', 'reset', '--yes', '--json'], {env})
    assert.equal(reset.code, 0, reset.stderr)
    assert.equal((JSON.parse(reset.stdout) as {restarted: boolean}).restarted, true)
    const kept = (await status()).markets
    assert.deepEqual(
      kept.map((m) => m.slug),
      ['localnet', 'h100'],
    )
    assert.notEqual(kept[1]!.address, before[1]!.address, 'a new chain opened them again')
    const one = await box.run(['localnet', 'reset', '--yes', '--markets', box.env.GPUNET_LOCALNET_MARKETS!])
    assert.equal(one.code, 0, one.stderr)
    assert.deepEqual(
      (await status()).markets.map((m) => m.slug),
      ['localnet'],
    )
  })
})
