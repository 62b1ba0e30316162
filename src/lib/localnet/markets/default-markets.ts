/**
 * The markets a localnet opens when no markets file is given: the default market as it always was (slug
 * `localnet`, 0.0001 tokens a second) and two more of other GPUs, VRAM, types and prices, one node each, so that
 * choosing a market can be rehearsed (docs/localnet.md, "Markets").
 */
import {DEFAULT_IMAGE_MB, DEFAULT_MARKET_SLUG, type MarketSpec, type MarketsSpec} from './spec.js'

/** The default market as it always was: slug `localnet`, one RTX 3060 node of 12 GB, 0.0001 tokens a second. */
export const DEFAULT_MARKET: MarketSpec = {
  slug: DEFAULT_MARKET_SLUG,
  name: 'gpunet localnet',
  type: 'COMMUNITY',
  gpus: ['NVIDIA GeForce RTX 3060'],
  vram: 12,
  priceUnits: '100',
  timeout: 7200,
  networkFee: 0,
  requiredImages: [],
  client: true,
  nodes: [{gpu: 'NVIDIA GeForce RTX 3060', vram: 12, ram: 32, country: 'NL', cached: []}],
}

/** The default markets; `--nodes N` sets the default market's node count. */
export const DEFAULT_MARKETS: MarketsSpec = {
  version: 1,
  images: {
    'docker.io/library/ubuntu:24.04': 78,
    'docker.io/library/alpine:3': 8,
    'docker.io/ollama/ollama:latest': 3500,
    'docker.io/vllm/vllm-openai:latest': 9800,
  },
  defaultImageSize: DEFAULT_IMAGE_MB,
  markets: [
    DEFAULT_MARKET,
    {
      slug: 'rtx-4090',
      name: 'NVIDIA RTX 4090',
      type: 'PREMIUM',
      gpus: ['NVIDIA GeForce RTX 4090'],
      vram: 24,
      priceUnits: '400',
      timeout: 7200,
      networkFee: 0,
      requiredImages: ['docker.io/ollama/ollama:latest'],
      client: true,
      nodes: [
        {gpu: 'NVIDIA GeForce RTX 4090', vram: 24, ram: 64, country: 'DE', cached: ['docker.io/ollama/ollama:latest']},
      ],
    },
    {
      slug: 'a100-80gb',
      name: 'NVIDIA A100 80GB',
      type: 'OTHER',
      gpus: ['NVIDIA A100 80GB PCIe'],
      vram: 80,
      priceUnits: '1200',
      timeout: 7200,
      networkFee: 0,
      requiredImages: [],
      client: true,
      nodes: [{gpu: 'NVIDIA A100 80GB PCIe', vram: 80, ram: 256, country: 'US', cached: []}],
    },
  ],
}
