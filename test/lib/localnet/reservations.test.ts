/**
 * The reservations lookups against the network's client: each answer parsed with a strict schema restating
 * nosana-kit's host-manager types for `getReservationsGpus`, `postReservationsRequirements` and
 * `postReservationsAvailable` (packages/api/src/client/host-manager/schema.ts), over hosts that leave and join.
 */
import {strict as assert} from 'node:assert'

import {array, boolean, enum as zodEnum, literal, null as zodNull, number, string, strictObject, union} from 'zod'

import {
  availableHosts,
  gpuModels,
  type HostView,
  requirementOptions,
  ReservationsError,
} from '../../../src/lib/localnet/services/reservations.js'

/** The network's shapes, member for member. */
const GPU_MODELS = strictObject({
  gpus: array(
    strictObject({
      name: string(),
      vramGb: number(),
      nodes: number(),
      available: number(),
      working: number(),
      markets: array(string()),
    }),
  ),
})
const OPTIONS = strictObject({
  nodes: number(),
  metrics: array(
    strictObject({
      key: string(),
      group: union([string(), zodNull()]),
      type: zodEnum(['integer', 'float', 'text', 'boolean', 'json']),
      match: zodEnum(['exact', 'minimum']),
      perInstance: boolean(),
      min: number().optional(),
      max: number().optional(),
      values: array(strictObject({value: union([number(), string(), boolean()]), nodes: number()})),
    }),
  ),
})
const AVAILABLE = strictObject({
  total: number(),
  price: union([strictObject({minUsdPerHour: number(), maxUsdPerHour: number()}), literal(null)]),
  nodes: array(strictObject({nodeAddress: string(), market: string()})),
})

const host = (over: Partial<HostView>): HostView => ({
  address: 'node-1',
  market: 'M1',
  gpu: 'NVIDIA GeForce RTX 4090',
  vram: 24,
  ram: 64,
  country: 'NL',
  queued: true,
  working: false,
  usdPerHour: 0.36,
  ...over,
})

const HOSTS = [
  host({}),
  host({address: 'node-2', ram: 128, country: 'DE', queued: false, working: true}),
  host({
    address: 'node-3',
    market: 'M2',
    gpu: 'NVIDIA H100 80GB HBM3',
    vram: 80,
    ram: 512,
    country: 'US',
    usdPerHour: 2.5,
  }),
  host({
    address: 'node-4',
    market: 'M2',
    gpu: 'NVIDIA H100 80GB HBM3',
    vram: 80,
    ram: 512,
    country: 'US',
    queued: false,
    usdPerHour: 2.5,
  }),
]

function refused(run: () => unknown, words: RegExp): void {
  assert.throws(
    run,
    (error: unknown) => error instanceof ReservationsError && error.status === 422 && words.test(error.message),
  )
}

describe('reservations lookups', () => {
  it('lists each GPU model with its VRAM, hosts, free (queued) and working hosts and markets', () => {
    const answer = GPU_MODELS.parse(gpuModels(HOSTS))
    assert.deepEqual(answer.gpus, [
      {name: 'NVIDIA GeForce RTX 4090', vramGb: 24, nodes: 2, available: 1, working: 1, markets: ['M1']},
      {name: 'NVIDIA H100 80GB HBM3', vramGb: 80, nodes: 2, available: 1, working: 0, markets: ['M2']},
    ])
  })

  it('counts a host that left (out of its queue) as not available, and again once it joined', () => {
    const left = HOSTS.map((h) => (h.address === 'node-3' ? {...h, queued: false} : h))
    assert.equal(gpuModels(left).gpus[1]!.available, 0)
    assert.equal(availableHosts(left, {requirements: {name: 'NVIDIA H100 80GB HBM3'}}).total, 0)
    assert.equal(gpuModels(HOSTS).gpus[1]!.available, 1)
    assert.equal(availableHosts(HOSTS, {requirements: {name: 'NVIDIA H100 80GB HBM3'}}).total, 1)
  })

  it('matches as the network does: a number a minimum, a string exact, the GPU model as name', () => {
    const found = (requirements: Record<string, unknown>) => AVAILABLE.parse(availableHosts(HOSTS, {requirements}))
    assert.deepEqual(found({vram_gb: 24}), {
      total: 2,
      price: {minUsdPerHour: 0.36, maxUsdPerHour: 2.5},
      nodes: [
        {nodeAddress: 'node-1', market: 'M1'},
        {nodeAddress: 'node-3', market: 'M2'},
      ],
    })
    assert.equal(found({vram_gb: 25}).total, 1)
    assert.equal(found({ram_gb: 64, country: 'NL'}).total, 1)
    assert.equal(found({country: 'nl'}).total, 0, 'exact, case included')
    assert.deepEqual(found({name: 'NVIDIA GeForce RTX'}), {total: 0, price: null, nodes: []})
    assert.equal(found({}).total, 2, 'only queued hosts: node-2 works, node-4 is not queued')
  })

  it('gives the options of each metric over the queued or working hosts that meet the requirements', () => {
    const answer = OPTIONS.parse(requirementOptions(HOSTS, {requirements: {name: 'NVIDIA GeForce RTX 4090'}}))
    assert.equal(answer.nodes, 2)
    assert.deepEqual(
      answer.metrics.map((m) => m.key),
      ['name', 'vram_gb', 'ram_gb', 'country'],
    )
    const ram = answer.metrics.find((m) => m.key === 'ram_gb')!
    assert.deepEqual(ram, {
      key: 'ram_gb',
      group: null,
      type: 'float',
      match: 'minimum',
      perInstance: false,
      min: 64,
      max: 128,
      values: [
        {value: 64, nodes: 1},
        {value: 128, nodes: 1},
      ],
    })
    const country = OPTIONS.parse(requirementOptions(HOSTS, {metrics: ['country']})).metrics
    assert.deepEqual(country, [
      {
        key: 'country',
        group: null,
        type: 'text',
        match: 'exact',
        perInstance: false,
        values: [
          {value: 'NL', nodes: 1},
          {value: 'DE', nodes: 1},
          {value: 'US', nodes: 1},
        ],
      },
    ])
  })

  it('refuses an unknown metric or a value of the wrong type with 422, even with no host in scope', () => {
    refused(
      () => availableHosts(HOSTS, {requirements: {gpu_count: 2}}),
      /^unknown metric gpu_count: the metrics are name, vram_gb, ram_gb, country$/,
    )
    refused(
      () => availableHosts([], {requirements: {vram_gb: '24'}}),
      /^requirement vram_gb must be a number, not a string$/,
    )
    refused(() => requirementOptions([], {requirements: {name: 4090}}), /name must be a string, not a number/)
    refused(() => requirementOptions(HOSTS, {metrics: ['colour']}), /unknown metric colour/)
    refused(() => availableHosts(HOSTS, {requirements: {vram_gb: [24]}}), /the body must be/)
    refused(() => availableHosts(HOSTS, {extra: 1}), /the body must be/)
  })
})
