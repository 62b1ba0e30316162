/**
 * Reading a markets file (YAML or JSON): parsed with the definition files' parser, so every refusal names the
 * file's line and column, checked with zod, then for what a schema cannot say (one slug per market, one of them
 * `localnet`, nodes with at least their market's VRAM and one of its GPU models), and made whole (every default in).
 */
import {readFileSync} from 'node:fs'

import type {$ZodIssue} from 'zod/v4/core'

import {detectFormat, parseSource, type Locate} from '../../definition/source.js'
import {toPointer} from '../../definition/paths.js'
import {ExitCode, GpunetError} from '../../errors.js'
import {parseAmount} from '../../text/amounts.js'
import {TOKEN_DECIMALS} from '../../market/networks.js'
import {
  DEFAULT_IMAGE_MB,
  DEFAULT_MARKET_SLUG,
  DEFAULT_TIMEOUT,
  MARKETS_FILE,
  type MarketsFile,
  type MarketsSpec,
  MAX_NODES,
  NODE_DEFAULTS,
} from './spec.js'

const HINT = 'fix the markets file (docs/localnet.md, "Markets"); nothing was started'

/** A problem at a place of the file: the member's path, and whether it is the name or the value that is wrong. */
interface Problem {
  path: (string | number)[]
  message: string
  anchor: 'key' | 'value'
}

/** Reads the markets file at `file` into the localnet's markets; a bad one is exit 2 with its line and column. */
export async function readMarketsFile(file: string): Promise<MarketsSpec> {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    throw new GpunetError(
      'markets_file_unreadable',
      `cannot read the markets file ${file}: ${(error as Error).message}`,
      {
        exitCode: ExitCode.USAGE,
        hint: 'give --markets (or GPUNET_LOCALNET_MARKETS) the path of a YAML or JSON markets file',
        fields: {file},
      },
    )
  }
  return parseMarketsText(text, file)
}

/** Parses a markets file's text (`file` names it in errors and picks YAML or JSON). */
export async function parseMarketsText(text: string, file: string): Promise<MarketsSpec> {
  const parsed = await parseSource(text, detectFormat(file, text))
  if (!parsed.ok) throw invalid(file, parsed.problem.line, parsed.problem.column, parsed.problem.message)
  const checked = MARKETS_FILE.safeParse(parsed.source.value)
  const locate = await parsed.source.locator()
  if (!checked.success) {
    const [issue] = checked.error.issues as [$ZodIssue]
    throw at(file, locate, issueProblem(issue))
  }
  const problem = semanticProblem(checked.data)
  if (problem) throw at(file, locate, problem)
  return wholeSpec(checked.data)
}

/** A zod issue as a place and words: an unknown member is pinned at its name. */
function issueProblem(issue: $ZodIssue): Problem {
  const path = issue.path.filter((p): p is string | number => typeof p !== 'symbol')
  if (issue.code === 'unrecognized_keys') {
    const [key] = issue.keys as [string]
    return {path: [...path, key], message: `unknown member \`${key}\``, anchor: 'key'}
  }
  const where = path.length > 0 ? `\`${path.join('.')}\`` : 'the file'
  return {path, message: `${where}: ${issue.message}`, anchor: 'value'}
}

/** What the schema cannot check: slugs, the default market, nodes against their market. */
function semanticProblem(file: MarketsFile): Problem | null {
  const seen = new Set<string>()
  let total = 0
  for (const [m, market] of file.markets.entries()) {
    if (seen.has(market.slug)) {
      return {path: ['markets', m, 'slug'], message: `a second market has the slug \`${market.slug}\``, anchor: 'value'}
    }
    seen.add(market.slug)
    let count = 0
    for (const [n, node] of (market.nodes ?? []).entries()) {
      count += node.count ?? 1
      if (node.vram !== undefined && node.vram < market.vram) {
        return {
          path: ['markets', m, 'nodes', n, 'vram'],
          message: `a node of \`${market.slug}\` has ${node.vram} GB of VRAM, less than the market's ${market.vram} GB (its lowest)`,
          anchor: 'value',
        }
      }
      if (node.gpu !== undefined && !market.gpus.includes(node.gpu)) {
        return {
          path: ['markets', m, 'nodes', n, 'gpu'],
          message: `\`${node.gpu}\` is not one of the GPU models of \`${market.slug}\` (${market.gpus.join(', ')})`,
          anchor: 'value',
        }
      }
    }
    if (count > MAX_NODES.market) {
      return {
        path: ['markets', m, 'nodes'],
        message: `more than ${MAX_NODES.market} nodes in one market`,
        anchor: 'value',
      }
    }
    total += count
  }
  if (total > MAX_NODES.total) {
    return {path: ['markets'], message: `more than ${MAX_NODES.total} nodes in all`, anchor: 'key'}
  }
  if (!seen.has(DEFAULT_MARKET_SLUG)) {
    return {
      path: ['markets'],
      message: `no market has the slug \`${DEFAULT_MARKET_SLUG}\`: the default market, which the chain is created with`,
      anchor: 'key',
    }
  }
  return null
}

/** A checked file with every default in; the default market first. */
function wholeSpec(file: MarketsFile): MarketsSpec {
  const markets = file.markets.map((market) => ({
    slug: market.slug,
    name: market.name ?? market.slug,
    type: market.type ?? 'COMMUNITY',
    gpus: market.gpus,
    vram: market.vram,
    priceUnits: parseAmount(String(market.price), TOKEN_DECIMALS, 'price').toString(),
    timeout: market.timeout ?? DEFAULT_TIMEOUT,
    networkFee: market.networkFee ?? 0,
    requiredImages: market.requiredImages ?? [],
    client: market.client ?? true,
    nodes: (market.nodes ?? [{}]).flatMap((node) =>
      Array.from({length: node.count ?? 1}, () => ({
        gpu: node.gpu ?? market.gpus[0]!,
        vram: node.vram ?? market.vram,
        ram: node.ram ?? NODE_DEFAULTS.ram,
        country: node.country ?? NODE_DEFAULTS.country,
        cached: node.cached ?? [],
      })),
    ),
  }))
  markets.sort((a, b) => Number(b.slug === DEFAULT_MARKET_SLUG) - Number(a.slug === DEFAULT_MARKET_SLUG))
  return {version: 1, images: file.images ?? {}, defaultImageSize: file.defaultImageSize ?? DEFAULT_IMAGE_MB, markets}
}

function at(file: string, locate: Locate, problem: Problem): GpunetError {
  const {line, column} = locate(toPointer(problem.path), problem.anchor)
  return invalid(file, line, column, problem.message)
}

function invalid(file: string, line: number, column: number, message: string): GpunetError {
  return new GpunetError('markets_file_invalid', `${file}:${line}:${column}: ${message}`, {
    exitCode: ExitCode.USAGE,
    hint: HINT,
    fields: {file, line, column},
  })
}
