/**
 * The localnet markets the test helpers pin: one market (the default, `localnet`) with one node, so a test that
 * needs no more runs one node agent, not the default markets' three; and simulated image pulls made instant.
 */
import {mkdirSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import type {MarketsSpec} from '../../src/lib/localnet/markets/spec.js'
import {DEFAULT_MARKET} from '../../src/lib/localnet/markets/default-markets.js'

/** The one-market localnet, as a markets file says it. */
export const ONE_MARKET_YAML = `markets:
  - slug: localnet
    name: gpunet localnet
    type: COMMUNITY
    gpus: [NVIDIA GeForce RTX 3060]
    vram: 12
    price: 0.0001
`

/** The same as a spec (what readMarketsFile makes of ONE_MARKET_YAML): the default market alone. */
export const ONE_MARKET: MarketsSpec = {
  version: 1,
  images: {},
  defaultImageSize: 500,
  markets: [DEFAULT_MARKET],
}

/** A simulated pull this many times faster than 50 MB/s is over at once (a 10 GB image: about 0.2 ms). */
export const INSTANT_PULLS = '1000000'

/** Writes the one-market file into `dir`; its path. */
export function writeOneMarketFile(dir: string): string {
  mkdirSync(dir, {recursive: true})
  const file = join(dir, 'one-market.yaml')
  writeFileSync(file, ONE_MARKET_YAML)
  return file
}
