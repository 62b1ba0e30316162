import type {Node as JsonNode, ParseError} from 'jsonc-parser'
import type {Document, Node as YamlNode} from 'yaml'

import {fromPointer} from './paths.js'

export type SourceFormat = 'json' | 'yaml'

/** A 1-based line and column in the user's file. */
export interface SourcePosition {
  line: number
  column: number
}

/**
 * Where a problem is pinned: a member's name, its value, or (for a missing member) the object that lacks it,
 * shown at that object's own name so JSON and YAML point at the same line.
 */
export type Anchor = 'key' | 'value' | 'parent'

/** Finds the line and column of the member at a JSON pointer. */
export type Locate = (pointer: string, anchor: Anchor) => SourcePosition

/** A job definition file read from text, able to point back at the line and column of any member. */
export interface ParsedSource {
  format: SourceFormat
  text: string
  value: unknown
  /** Resolves a locator; for JSON the position parser is only loaded when there is something to locate. */
  locator(): Promise<Locate>
}

/** A file that is not well-formed JSON or YAML. */
export interface SyntaxProblem {
  code: 'syntax_error'
  message: string
  line: number
  column: number
}

export type ParseOutcome = {ok: true; source: ParsedSource} | {ok: false; problem: SyntaxProblem}

/** Picks the format from the file name, or from the first character for standard input and unknown names. */
export function detectFormat(filename: string, text: string): SourceFormat {
  if (/\.ya?ml$/i.test(filename)) return 'yaml'
  if (/\.json$/i.test(filename)) return 'json'
  return /^\s*[[{]/.test(text) ? 'json' : 'yaml'
}

/**
 * Parses a definition file's text; syntax errors come back with their line and column.
 * The YAML and position-keeping JSON parsers are loaded on demand: a valid JSON file needs neither.
 */
export async function parseSource(rawText: string, format: SourceFormat): Promise<ParseOutcome> {
  const text = rawText.startsWith('\uFEFF') ? rawText.slice(1) : rawText
  if (text.trim() === '')
    return {ok: false, problem: {code: 'syntax_error', message: 'the file is empty', line: 1, column: 1}}
  return format === 'json' ? parseJsonSource(text) : parseYamlSource(text)
}

function lineStarts(text: string): number[] {
  const starts = [0]
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) starts.push(i + 1)
  return starts
}

/** Turns a character offset into a 1-based line and column. */
export function positionOf(starts: number[], offset: number): SourcePosition {
  let low = 0
  let high = starts.length - 1
  while (low < high) {
    const mid = (low + high + 1) >> 1
    if ((starts[mid] as number) <= offset) low = mid
    else high = mid - 1
  }
  return {line: low + 1, column: offset - (starts[low] as number) + 1}
}

const JSON_ERROR_WORDS: Record<string, string> = {
  CloseBraceExpected: 'expected `}`',
  CloseBracketExpected: 'expected `]`',
  ColonExpected: 'expected `:` after the member name',
  CommaExpected: 'expected `,` between members or items',
  EndOfFileExpected: 'unexpected text after the end of the document',
  InvalidCharacter: 'invalid character',
  InvalidCommentToken: 'comments are not allowed in JSON',
  InvalidEscapeCharacter: 'invalid escape sequence in a string',
  InvalidNumberFormat: 'invalid number',
  InvalidSymbol: 'unexpected symbol',
  InvalidUnicode: 'invalid unicode escape',
  PropertyNameExpected: 'expected a member name in double quotes',
  UnexpectedEndOfComment: 'unterminated comment',
  UnexpectedEndOfNumber: 'unterminated number',
  UnexpectedEndOfString: 'unterminated string',
  ValueExpected: 'expected a value',
}

async function parseJsonSource(text: string): Promise<ParseOutcome> {
  let value: unknown
  try {
    // The native parser is the fast path; the tolerant one only runs to explain a failure or to locate members.
    value = JSON.parse(text)
  } catch {
    const {parse: parseJsonc, printParseErrorCode} = await import('jsonc-parser')
    const errors: ParseError[] = []
    parseJsonc(text, errors, {allowTrailingComma: false, disallowComments: true})
    const first = errors[0]
    const at = positionOf(lineStarts(text), first?.offset ?? 0)
    const code = first ? printParseErrorCode(first.error) : 'InvalidSymbol'
    const trailingComma =
      first !== undefined && /,\s*$/.test(text.slice(0, first.offset)) && /^[\]}]/.test(text.slice(first.offset))
    const words = trailingComma ? 'a trailing comma is not allowed in JSON' : (JSON_ERROR_WORDS[code] ?? code)
    return {ok: false, problem: {code: 'syntax_error', message: `invalid JSON: ${words}`, ...at}}
  }
  return {
    ok: true,
    source: {
      format: 'json',
      text,
      value,
      async locator() {
        const {parseTree} = await import('jsonc-parser')
        const tree = parseTree(text)
        const starts = lineStarts(text)
        return (pointer, anchor) => positionOf(starts, tree ? jsonOffset(tree, fromPointer(pointer), anchor) : 0)
      },
    },
  }
}

function jsonOffset(root: JsonNode, segments: string[], anchor: Anchor): number {
  const steps = anchor === 'parent' ? segments.slice(0, -1) : segments
  const wantKey = anchor !== 'value'
  let node = root
  let keyNode: JsonNode | undefined
  for (const segment of steps) {
    let next: JsonNode | undefined
    keyNode = undefined
    if (node.type === 'object') {
      // The last property of a repeated name wins, as JSON.parse decides.
      const property = node.children?.findLast((p) => p.children?.[0]?.value === segment)
      keyNode = property?.children?.[0]
      next = property?.children?.[1]
    } else if (node.type === 'array') {
      next = node.children?.[Number(segment)]
    }
    if (!next) return keyNode?.offset ?? node.offset
    node = next
  }
  return wantKey && keyNode ? keyNode.offset : node.offset
}

async function parseYamlSource(text: string): Promise<ParseOutcome> {
  const yaml = await import('yaml')
  const lineCounter = new yaml.LineCounter()
  const doc = yaml.parseDocument(text, {lineCounter, prettyErrors: false, uniqueKeys: true})
  const error = doc.errors[0]
  if (error) {
    const at = lineCounter.linePos(error.pos[0])
    const message = error.message.split('\n')[0] ?? error.message
    return {
      ok: false,
      problem: {code: 'syntax_error', message: `invalid YAML: ${message}`, line: at.line, column: at.col},
    }
  }
  let value: unknown
  try {
    value = doc.toJS({maxAliasCount: 100})
  } catch (error_) {
    return {
      ok: false,
      problem: {code: 'syntax_error', message: `invalid YAML: ${(error_ as Error).message}`, line: 1, column: 1},
    }
  }
  return {
    ok: true,
    source: {
      format: 'yaml',
      text,
      value,
      async locator() {
        return (pointer, anchor) => {
          const at = lineCounter.linePos(yamlOffset(yaml, doc, fromPointer(pointer), anchor))
          return {line: at.line, column: at.col}
        }
      },
    },
  }
}

function yamlOffset(yaml: typeof import('yaml'), doc: Document, segments: string[], anchor: Anchor): number {
  const {isMap, isPair, isScalar, isSeq} = yaml
  const steps = anchor === 'parent' ? segments.slice(0, -1) : segments
  const wantKey = anchor !== 'value'
  let node = doc.contents as YamlNode | null
  let keyOffset: number | undefined
  for (const segment of steps) {
    if (!node) break
    let next: YamlNode | undefined
    keyOffset = undefined
    if (isMap(node)) {
      const pair = node.items.findLast((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === segment)
      keyOffset = (pair?.key as YamlNode | undefined)?.range?.[0]
      next = (pair?.value as YamlNode | undefined) ?? undefined
    } else if (isSeq(node)) {
      next = node.items[Number(segment)] as YamlNode | undefined
    }
    if (!next) return keyOffset ?? node.range?.[0] ?? 0
    node = next
  }
  if (wantKey && keyOffset !== undefined) return keyOffset
  return node?.range?.[0] ?? 0
}
