/**
 * How a tool runs its command: `bin/run.js` spawned with `--json`, its one document read from stdout and its exit
 * code kept. A process of its own per call, not oclif's `run` in this process: a command sets `process.exitCode`,
 * writes to `process.stdout` (the stdio transport's own stream), reads settings from `process.env` and may end the
 * process at exit, and two calls may run at once; a child keeps each call's output, exit code, settings and
 * failure apart, and is exactly what a user's `gpunet ... --json` prints. It costs a Node start per call.
 */
import {spawn} from 'node:child_process'
import {join} from 'node:path'

import {packageRoot} from '../package-root.js'

/** The most of a command's stdout read (a `job list` of thousands of jobs fits well under it). */
const MAX_OUTPUT_BYTES = 32 * 1024 * 1024

/** What a command printed: its document (or its JSON lines) and its exit code. */
export interface CommandOutput {
  exitCode: number
  /** The `--json` document; for a JSON-lines command (`job logs`), every line's document. */
  document: unknown
  /** A JSON-lines command's lines. */
  lines?: unknown[]
  /** Why a following read ended: its line count, its time, or the command's own end. */
  ended?: 'maxLines' | 'maxSeconds' | 'exit'
}

export interface RunOptions {
  /** The words after `gpunet` (without `--json`). */
  words: string[]
  /** `--` and the words after it (`job run -- CMD...`): `--json` goes before them. */
  tail?: string[]
  /** The session's environment (its network and the other session-wide settings). */
  env: NodeJS.ProcessEnv
  jsonLines: boolean
  follow?: {maxLines: number; maxSeconds: number} | null
  signal?: AbortSignal
  /** The CLI to run (a test's stand-in); `bin/run.js` of this package by default. */
  bin?: string
}

/** Runs one command with `--json` and reads what it printed. */
export function runCommand(options: RunOptions): Promise<CommandOutput> {
  const bin = options.bin ?? join(packageRoot(), 'bin', 'run.js')
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...options.words, '--json', ...(options.tail ?? [])], {
      env: options.env,
      stdio: ['ignore', 'pipe', 'ignore'],
    })
    const chunks: Buffer[] = []
    let size = 0
    let lines = 0
    let ended: CommandOutput['ended'] = 'exit'
    const stop = (why: CommandOutput['ended']) => {
      if (child.exitCode !== null || child.signalCode !== null) return
      ended = why
      child.kill('SIGTERM')
    }
    child.stdout.on('data', (chunk: Buffer) => {
      if (size >= MAX_OUTPUT_BYTES) return
      chunks.push(chunk)
      size += chunk.length
      if (size >= MAX_OUTPUT_BYTES) stop('exit')
      if (options.follow) {
        for (const byte of chunk) if (byte === 0x0a) lines++
        if (lines >= options.follow.maxLines) stop('maxLines')
      }
    })
    const timer = options.follow ? setTimeout(() => stop('maxSeconds'), options.follow.maxSeconds * 1000) : undefined
    const abort = () => child.kill('SIGTERM')
    options.signal?.addEventListener('abort', abort, {once: true})
    child.on('error', reject)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      options.signal?.removeEventListener('abort', abort)
      const text = Buffer.concat(chunks).toString('utf8')
      // A following read the server ended by its bound ended as asked: exit 0, whatever the signal made of it.
      const exitCode = options.follow && ended !== 'exit' ? 0 : (code ?? (signal === 'SIGINT' ? 130 : 143))
      if (options.jsonLines) {
        let all = text.split('\n').filter((line) => line.trim() !== '')
        if (options.follow && ended === 'maxLines') all = all.slice(0, options.follow.maxLines)
        const parsed = all.flatMap((line) => {
          try {
            return [JSON.parse(line) as unknown]
          } catch {
            return [] // a line cut short by the bound
          }
        })
        const last = parsed.at(-1) as {error?: unknown} | undefined
        const error = last && typeof last === 'object' && 'error' in last ? last : undefined
        const document = {lines: error ? parsed.slice(0, -1) : parsed, ...(options.follow ? {ended} : {}), ...error}
        resolve({exitCode, document, lines: parsed, ended: options.follow ? ended : undefined})
        return
      }
      resolve({exitCode, document: parseDocument(text, options.words, exitCode)})
    })
  })
}

/** The command's document; a command that printed none gets an error document saying so (never a stack). */
function parseDocument(text: string, words: string[], exitCode: number): unknown {
  try {
    return JSON.parse(text) as unknown
  } catch {
    return {
      error: {
        code: 'no_document',
        message: `gpunet ${words
          .filter((word) => !word.startsWith('-'))
          .slice(0, 3)
          .join(' ')} printed no JSON document (exit ${exitCode})`,
      },
    }
  }
}
