/**
 * podman's REST API (libpod), served on a socket of the node's own by `podman system service`, for `exec`: through
 * the API a command starts without starting the podman binary, which is most of what `podman exec` costs (here
 * about 150 ms against 60 through the API), and the network's nodes reach podman the same way (its socket, through
 * dockerode). The service starts on first use and ends itself after IDLE_SECONDS without a connection, so a node
 * killed before its close leaves nothing running for long; the next exec starts it again.
 */
import {type ChildProcess, spawn} from 'node:child_process'
import {EventEmitter} from 'node:events'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {type Duplex, PassThrough, Writable} from 'node:stream'
import {finished} from 'node:stream/promises'
import {setTimeout as sleep} from 'node:timers/promises'

import {Client, type Dispatcher} from 'undici'

import type {ExecChild, ExecOptions, ExecProcess} from './exec.js'
import {signalProcessesWhere} from '../../process/signal-where.js'

const API = '/v4.0.0/libpod'
const IDLE_SECONDS = 60
const START_TIMEOUT_MS = 20_000
/** podman's answers here are a few hundred bytes; anything far larger is not podman's. */
const MAX_JSON_BYTES = 64 * 1024
/** Tries of one terminal resize, the first retry after RESIZE_RETRY_MS, doubling (about 3 s in all). */
const RESIZE_TRIES = 5
const RESIZE_RETRY_MS = 200
/** podman frames output in pieces of at most 32 KiB; a header announcing more than this is refused. */
const MAX_FRAME_BYTES = 1 << 20
const FRAME_HEADER = 8
const STREAM_STDOUT = 1
const STREAM_STDERR = 2

interface Service {
  client: Client
  child: ChildProcess
}

/** One node's podman API service, started when first needed. */
export class PodmanApi {
  private service: Promise<Service> | null = null

  /** `ownerTag` goes in the service's socket path, so `stopLeftServices` finds the service a killed node left. */
  constructor(
    private readonly podman: string,
    private readonly env: () => NodeJS.ProcessEnv,
    private readonly ownerTag = '',
  ) {}

  /**
   * Runs `cmd` in the container `name` with `env` added, as `podman exec -i [-t]` would. Its kill() drops the
   * session's connection; the command itself is ended by its marker (markedSession, exec.ts).
   */
  exec(name: string, cmd: readonly string[], env: readonly string[], options: ExecOptions): ExecProcess {
    const events = new EventEmitter()
    const stdout = new PassThrough()
    const stderr = new PassThrough()
    let socket: Duplex | null = null
    let killed = false
    let id: string | null = null
    /** How many resizes were asked: a retry stops once a newer one is. */
    let resizes = 0
    const connected = this.attach(name, cmd, env, options).then(
      (session) => {
        id = session.id
        socket = session.socket
        if (killed) socket.destroy()
        return session
      },
      (error: Error) => {
        stdout.end()
        stderr.end()
        events.emit('error', error)
        throw error
      },
    )
    // Writes wait for the session (construct), and an end of stdin ends the connection's sending half, which podman
    // passes on to the command as the end of its input.
    const stdin = new Writable({
      construct: (callback) => void connected.then(() => callback(), callback),
      write: (chunk: Buffer, _encoding, callback) => void socket!.write(chunk, callback),
      final: (callback) => {
        socket!.end()
        callback()
      },
    })
    void connected
      .then(async ({socket, service}) => {
        const done = finished(socket, {writable: false}).catch(() => undefined)
        const malformed = options.tty ? passRaw(socket, stdout) : demultiplex(socket, stdout, stderr)
        await done
        stdout.end()
        stderr.end()
        const code = await malformed.then(async (fault) => {
          if (fault) throw new Error(fault)
          return exitCode(service.client, id!)
        })
        await Promise.all([finished(stdout), finished(stderr)]).catch(() => undefined)
        events.emit('close', code, null)
      })
      .catch((error: Error) => {
        if (socket) events.emit('error', error)
      })
    stdin.on('error', () => undefined)
    const child = Object.assign(events, {stdin, stdout, stderr}) as ExecChild
    return {
      child,
      resize: (cols, rows) => {
        if (id === null) return
        const asked = ++resizes
        const session = id
        void (async () => {
          // A resize is asked once per window change: one podman refuses or drops (a busy service) would leave the
          // terminal at its old size for good, so it is tried again, until a newer size takes its place.
          for (let attempt = 0; attempt < RESIZE_TRIES && asked === resizes; attempt++) {
            try {
              const {client} = await this.connect()
              await request(client, 'POST', `${API}/exec/${session}/resize?h=${rows}&w=${cols}`)
              return
            } catch {
              await sleep(RESIZE_RETRY_MS * 2 ** attempt)
            }
          }
        })()
      },
      kill: () => {
        killed = true
        socket?.destroy()
      },
    }
  }

  /** Stops the service, if it runs. */
  async close(): Promise<void> {
    const service = await this.service?.catch(() => null)
    this.service = null
    if (!service) return
    await service.client.close().catch(() => undefined)
    if (service.child.exitCode === null && service.child.signalCode === null) {
      const exited = new Promise((resolve) => service.child.once('exit', resolve))
      service.child.kill('SIGTERM')
      await Promise.race([exited, sleep(5000)])
      service.child.kill('SIGKILL')
    }
  }

  private async attach(name: string, cmd: readonly string[], env: readonly string[], options: ExecOptions) {
    const service = await this.connect()
    const size = options.tty && options.cols && options.rows ? {ConsoleSize: [options.rows, options.cols]} : {}
    const created = await request(service.client, 'POST', `${API}/containers/${encodeURIComponent(name)}/exec`, {
      Cmd: cmd,
      Env: env,
      AttachStdin: true,
      AttachStdout: true,
      AttachStderr: true,
      Tty: options.tty,
      ...size,
    })
    const id = (created as {Id?: unknown} | null)?.Id
    if (typeof id !== 'string' || !/^[0-9a-f]{64}$/.test(id)) throw new Error('podman gave no exec session id')
    const start = {
      Detach: false,
      Tty: options.tty,
      ...(options.tty && options.cols ? {h: options.rows, w: options.cols} : {}),
    }
    const {socket} = await service.client.upgrade({
      path: `${API}/exec/${id}/start`,
      method: 'POST',
      protocol: 'tcp',
      headers: {'content-type': 'application/json'},
      // undici passes the body of an upgrade on; its types leave it out.
      ...({body: JSON.stringify(start)} as object),
    })
    return {id, socket, service}
  }

  private connect(): Promise<Service> {
    if (this.service) return this.service
    // Forgotten when it fails to start or ends (idle, or killed): the next exec starts another.
    const forget = () => {
      if (this.service === starting) this.service = null
    }
    const starting: Promise<Service> = this.start(forget).catch((error: unknown) => {
      forget()
      throw error
    })
    this.service = starting
    return starting
  }

  private async start(onEnd: () => void): Promise<Service> {
    const dir = mkdtempSync(socketDirPrefix(this.ownerTag))
    const socketPath = join(dir, 'podman.sock')
    const child = spawn(this.podman, ['system', 'service', `--time=${IDLE_SECONDS}`, `unix://${socketPath}`], {
      env: this.env(),
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let stderr = ''
    child.stderr!.on('data', (data: Buffer) => {
      if (stderr.length < 4096) stderr += data.toString('utf8')
    })
    let exited = false
    child.once('error', () => undefined)
    child.once('close', () => {
      exited = true
      onEnd()
      rmSync(dir, {recursive: true, force: true})
    })
    const client = new Client('http://podman', {socketPath})
    const deadline = Date.now() + START_TIMEOUT_MS
    for (;;) {
      try {
        await request(client, 'GET', '/_ping')
        return {client, child}
      } catch {
        if (exited || Date.now() > deadline) {
          await client.close().catch(() => undefined)
          child.kill('SIGKILL')
          const why = stderr.trim().split('\n').pop() ?? ''
          throw new Error(`podman system service did not start${why ? `: ${why}` : ''}`)
        }
        await sleep(25)
      }
    }
  }
}

/** Where a service's private socket folder is made (mkdtemp adds six random characters). */
function socketDirPrefix(ownerTag: string): string {
  return join(tmpdir(), `gpunet-podman-api-${ownerTag === '' ? '' : `${ownerTag}-`}`)
}

/**
 * Kills the podman API services a node of `ownerTag` started and left when it was killed (the service would
 * otherwise wait out its idle time, serving nobody); found by their socket path in /proc. Returns how many.
 */
export function stopLeftServices(ownerTag: string): number {
  // Without a tag the prefix would match every node's services.
  if (ownerTag === '') return 0
  const socket = Buffer.from(`\0unix://${socketDirPrefix(ownerTag)}`)
  const service = (cmdline: Buffer) => cmdline.includes('\0system\0service\0') && cmdline.includes(socket)
  return signalProcessesWhere('cmdline', service, 'SIGKILL')
}

/** One request; its JSON answer (null when empty). A status of 300 or more throws podman's message. */
async function request(client: Client, method: Dispatcher.HttpMethod, path: string, body?: object): Promise<unknown> {
  const res = await client.request({
    path,
    method,
    headers: body === undefined ? {} : {'content-type': 'application/json'},
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  let text = ''
  for await (const chunk of res.body) {
    text += (chunk as Buffer).toString('utf8')
    if (text.length > MAX_JSON_BYTES) {
      res.body.destroy()
      throw new Error(`podman answered ${path} with more than ${MAX_JSON_BYTES} bytes`)
    }
  }
  let parsed: unknown = null
  try {
    parsed = text.trim() === '' || text.trim() === 'OK' ? null : JSON.parse(text)
  } catch {
    throw new Error(`podman answered ${path} with something other than JSON`)
  }
  if (res.statusCode >= 300) {
    const message = (parsed as {cause?: unknown; message?: unknown} | null)?.cause
    throw new Error(
      res.statusCode === 404 || res.statusCode === 409
        ? "the operation's container is not running"
        : `podman answered ${res.statusCode}${typeof message === 'string' ? `: ${message.slice(0, 200)}` : ''}`,
    )
  }
  return parsed
}

/** The session's exit code, once podman has recorded it. */
async function exitCode(client: Client, id: string): Promise<number> {
  for (let tries = 0; ; tries++) {
    const info = (await request(client, 'GET', `${API}/exec/${id}/json`)) as {ExitCode?: unknown; Running?: unknown}
    if (info?.Running !== true && Number.isInteger(info?.ExitCode)) return info.ExitCode as number
    if (tries >= 40) throw new Error('podman did not record how the command ended')
    await sleep(25)
  }
}

/** A TTY session's one stream, carried as it is. Resolves with a fault (none here) when the connection ends. */
async function passRaw(socket: Duplex, stdout: PassThrough): Promise<string | null> {
  socket.on('data', (data: Buffer) => {
    if (!stdout.write(data)) {
      socket.pause()
      stdout.once('drain', () => socket.resume())
    }
  })
  return null
}

/**
 * Splits podman's framed output (a byte naming the stream, three zero bytes, a 32-bit length, the bytes) into stdout
 * and stderr; a frame of another stream or larger than MAX_FRAME_BYTES ends the session as malformed.
 */
function demultiplex(socket: Duplex, stdout: PassThrough, stderr: PassThrough): Promise<string | null> {
  return new Promise((resolve) => {
    let pending: Buffer = Buffer.alloc(0)
    socket.on('data', (data: Buffer) => {
      pending = pending.length === 0 ? data : Buffer.concat([pending, data])
      while (pending.length >= FRAME_HEADER) {
        const stream = pending[0]
        const size = pending.readUInt32BE(4)
        if ((stream !== STREAM_STDOUT && stream !== STREAM_STDERR) || size > MAX_FRAME_BYTES) {
          socket.destroy()
          resolve('podman sent output the exec protocol does not have')
          return
        }
        if (pending.length < FRAME_HEADER + size) break
        const target = stream === STREAM_STDOUT ? stdout : stderr
        if (!target.write(pending.subarray(FRAME_HEADER, FRAME_HEADER + size))) {
          socket.pause()
          target.once('drain', () => socket.resume())
        }
        pending = pending.subarray(FRAME_HEADER + size)
      }
    })
    socket.once('close', () => resolve(pending.length === 0 ? null : 'podman ended the output mid-frame'))
  })
}
