/**
 * The localnet process: loads (or creates) the chain, serves JSON-RPC, its WebSocket side and the mounted
 * services on 127.0.0.1, records its URLs for `localnet status`, and saves the chain when it stops.
 */
import {once} from 'node:events'
import {createServer, type IncomingMessage, type Server, type ServerResponse} from 'node:http'
import type {AddressInfo} from 'node:net'
import {renameSync, rmSync, writeFileSync} from 'node:fs'
import type {Duplex} from 'node:stream'

import {Connection, PublicKey} from '@solana/web3.js'
import {WebSocketServer} from 'ws'

import {isJsonContentType, type LoopbackPolicy, webPageRefusal} from '../../http/loopback-guard.js'
import {cachedJobAuthority, chainJobAuthority, KEY_ENV, openSecretsService} from '../../secrets/service/index.js'
import {contentProxy} from '../content/content-proxy.js'
import {contentService} from '../content/content-routes.js'
import {hostManagerService} from '../services/host-manager.js'
import {DEFAULT_MARKET_SLUG, type MarketsSpec} from '../markets/spec.js'
import {defaultMarketTerms, marketsInForce, type OpenedMarket, openLocalnetMarkets} from '../markets/record.js'
import {nodeControlService} from './node-control.js'
import {JobIndex, jobIndexService} from '../services/job-index.js'
import {readBody, sendJson, sendTooLarge, type SubService} from '../http.js'
import type {LocalnetIds} from '../../settings/kinds.js'
import {Localnet} from '../state.js'
import {
  type LocalnetNodeEntry,
  type LocalnetNodeOptions,
  type LocalnetNodeStatus,
  marketNodeKeyFilesFrom,
  nodeKeyFilesFrom,
  type RunningNode,
  startNode,
} from '../nodes/node-agent.js'
import {loadOrCreateKeypair, walletFromBytes} from '../../keys/wallet.js'
import {openCreditLedger} from '../../credits/ledger.js'
import {creditRoutes} from '../../credits/routes.js'
import {fundFromFaucet} from '../fund.js'
import type {CooldownsGiven} from '../../deployments/cooldowns.js'
import {type ManagerOptions, type RunningManager, startDeploymentManager} from '../../deployments/manager.js'
import {marketNetwork, type MarketSettings} from '../../market/connect.js'
import {localnetDeploymentRoutes, replicaOnline} from '../nodes/deployment-routes.js'
import {localnetRewardsAccounts} from '../rewards.js'
import {localnetFiles} from '../paths.js'
import {RpcHandler} from '../rpc/rpc.js'
import {serveSubscriptions} from '../rpc/websocket.js'

/** Only loopback: the localnet holds a faucet and no authentication. */
export const LOCALNET_HOST = '127.0.0.1'
const MAX_RPC_BODY = 2 * 1024 * 1024

/** What a running localnet publishes in `localnet.json` and `localnet status`. */
export interface LocalnetRuntime {
  pid: number
  rpcUrl: string
  wsUrl: string
  /** IPFS HTTP API (`/api/v0/add`) and gateway (`/ipfs/<cid>`) base URL. */
  contentStoreUrl: string
  /** The secrets service running in the localnet, its job-scoped logins answered from this chain. */
  secretsUrl: string | null
  /** The deployment manager running in the localnet, as a client reaches it; null when turned off. */
  deploymentManager: string | null
  /** The node gateway, `http://node.localhost:<port>`: a job's exposed port is at `http://<job>.node.localhost:<port>/`. */
  gatewayUrl: string | null
  /** The gateway's https side, `https://node.localhost:<https port>`: the same services as `gatewayUrl`. */
  gatewayHttpsUrl: string | null
  /** The localnet's certificate authority (PEM), which signs the gateway's certificate: the file a client trusts. */
  caCertificate: string | null
  /**
   * The localnet's FRP server address, host and port, as the network's CLI takes `FRP_SERVER_ADDRESS`: a service is at
   * `http://<hash>.<http>` and `https://<hash>.<https>`.
   */
  frpServerAddress: {http: string; https: string} | null
  /** The forward proxy that serves the network SDK's built-in content hosts from the content store (`HTTPS_PROXY`). */
  proxyUrl: string | null
  /** The localnet's (first) node, or why it is off; null when it was not asked for. */
  node: LocalnetNodeStatus | null
  /** Every node agent (`--nodes N`), idle or running which job; empty when none runs. */
  nodes: LocalnetNodeEntry[]
  /** The localnet's markets (the default first): slug, address, and how many nodes serve each now. */
  markets: LocalnetMarketEntry[]
  startedAt: string
  /** The node flags it was started with (`--gpus 2 --host-processes ...`): `localnet reset` starts it again so. */
  startArgs: string[]
}

/** A market of the localnet as `localnet status` lists it. */
export interface LocalnetMarketEntry {
  slug: string
  address: string
  name: string
  /** Node agents serving it now (0 with --no-node). */
  nodes: number
}

export interface StartOptions {
  dataDir: string
  /** RPC port; the WebSocket endpoint takes the next one. 0 picks a free pair. */
  port: number
  slotMs?: number
  /** Funded on first start. */
  wallet?: PublicKey
  /** The content store's disk use (DEFAULT_CONTENT_MAX_BYTES when absent). */
  contentMaxBytes?: number
  /** More services sharing the process and port. */
  services?: SubService[]
  /** Runs the node agent and its gateway; without it no job is ever taken (tests that act as the node). */
  node?: LocalnetNodeOptions
  /** The node flags of `localnet start` that gave `node`, kept in the runtime file for `localnet reset`. */
  startArgs?: string[]
  /** The addresses a new chain is created with (an existing chain keeps its own). */
  ids?: LocalnetIds
  /** Runs the deployment manager (on unless false). */
  deploymentManager?: boolean
  /** Browser origins its services answer besides their own (the allowOrigin setting); none by default. */
  allowedOrigins?: readonly string[]
  /** Its deployment manager's tunnel grace before scaling, in ms (the tunnelGrace setting; 60 s by default). */
  tunnelGraceMs?: number
  /** How long its manager drains a retired replica, in ms (the drainTimeout setting; 10 minutes by default). */
  drainTimeoutMs?: number
  /** The secretsKey setting: the in-process secrets service's master key instead of its key file. */
  secretsKey?: string
  /** Its deployment manager's cooldown settings (deployments/cooldowns.ts); the network's defaults when absent. */
  cooldowns?: CooldownsGiven
  /** The markets of a markets file (`--markets`); unset: those the data directory keeps, else the defaults. */
  markets?: MarketsSpec
  /** The token's USD price its host manager gives (the tokenUsd setting; 0.5 when not given). */
  tokenUsd?: number
}

export interface RunningLocalnet {
  node: Localnet
  runtime: LocalnetRuntime
  /** The node agent and gateway, when they run. */
  agent: RunningNode | null
  /** The deployment manager running in the localnet, when it runs. */
  manager: RunningManager | null
  /** Stops serving, saves the chain and removes `localnet.json`. */
  close(): Promise<void>
}

/** Starts a localnet in this process. */
export async function startLocalnet(options: StartOptions): Promise<RunningLocalnet> {
  const spec = marketsInForce(options.dataDir, options.markets)
  const node = Localnet.open({
    dataDir: options.dataDir,
    slotMs: options.slotMs,
    wallet: options.wallet,
    ids: options.ids,
    contentMaxBytes: options.contentMaxBytes,
    defaultMarket: defaultMarketTerms(spec),
  })
  // Each market of the spec the chain lacks is opened now, with the jobs program's own `open`.
  const markets: OpenedMarket[] = openLocalnetMarkets(node, options.dataDir, spec)
  const rpc = new RpcHandler(node)
  const index = new JobIndex(node.chain, localnetFiles(options.dataDir).jobIndex)
  let rpcUrl = ''
  let agent: RunningNode | null = null
  const content = contentService(node.content)
  const marketsView = {markets: () => markets, nodes: () => agent?.nodes() ?? [], tokenUsd: options.tokenUsd ?? 0.5}
  const services = [
    content,
    jobIndexService(index),
    hostManagerService(node, () => rpcUrl, marketsView),
    nodeControlService(() => agent),
    ...(options.services ?? []),
  ]
  const policy = {allowedOrigins: options.allowedOrigins}
  const http = createServer((req, res) => void route(req, res, rpc, services, policy))
  // Longer than clients keep idle sockets (undici: 4 s by default), so a client never writes a request into a
  // socket the server is closing at that moment.
  http.keepAliveTimeout = 65_000
  const wsHttp = createServer((_req, res) => sendJson(res, 400, {error: 'this port serves WebSocket subscriptions'}))
  const wss = new WebSocketServer({noServer: true})
  const upgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const refusal = webPageRefusal(req, policy)
    if (refusal) return void socket.end(`HTTP/1.1 ${refusal.status} Refused\r\nconnection: close\r\n\r\n`)
    wss.handleUpgrade(req, socket, head, (ws) => serveSubscriptions(ws, node.chain, rpc))
  }
  http.on('upgrade', upgrade)
  wsHttp.on('upgrade', upgrade)
  let port: number
  try {
    port = await listenPair(http, wsHttp, options.port)
  } catch (error) {
    node.chain.compact()
    throw error
  }
  // The secrets service gets its own port (it is a separate HTTP API with its own errors and limits); its
  // job-scoped logins are checked against this chain and this content store, as a real network's are.
  // Through this localnet's own RPC, with the code that checks a real network's chain.
  const base = `http://${LOCALNET_HOST}:${port}`
  rpcUrl = base
  const secrets = await openSecretsService({
    dataDir: localnetFiles(options.dataDir).secrets,
    env: {[KEY_ENV]: options.secretsKey},
    allowedOrigins: options.allowedOrigins,
    authority: cachedJobAuthority(
      chainJobAuthority({
        connection: new Connection(base, 'confirmed'),
        programId: node.chain.programId,
        readContent: async (cid) => node.content.get(cid),
        settings: {rpc: 'the localnet (gpunet localnet status)', content: 'the localnet (gpunet localnet status)'},
      }),
    ),
  })
  const secretsUrl = await secrets.service.listen(0, LOCALNET_HOST)
  const proxy = contentProxy(content)
  proxy.listen(0, LOCALNET_HOST)
  await once(proxy, 'listening')

  const runtime: LocalnetRuntime = {
    pid: process.pid,
    rpcUrl: base,
    wsUrl: `ws://${LOCALNET_HOST}:${port + 1}`,
    contentStoreUrl: base,
    secretsUrl,
    deploymentManager: null,
    gatewayUrl: null,
    gatewayHttpsUrl: null,
    caCertificate: null,
    frpServerAddress: null,
    proxyUrl: `http://${LOCALNET_HOST}:${(proxy.address() as AddressInfo).port}`,
    node: null,
    nodes: [],
    markets: [],
    startedAt: new Date().toISOString(),
    startArgs: options.startArgs ?? [],
  }
  const files = localnetFiles(options.dataDir)
  let manager: RunningManager | null = null
  // The status file follows the node: `localnet status` lists the jobs it runs.
  const publish = () => {
    if (agent) {
      runtime.node = agent.status()
      runtime.nodes = agent.nodes()
    }
    runtime.markets = markets.map((m) => ({
      slug: m.slug,
      address: m.address,
      name: m.name,
      nodes: runtime.nodes.filter((n) => n.market === m.address).length,
    }))
    writeFileSync(`${files.runtime}.tmp`, `${JSON.stringify(runtime, null, 2)}\n`)
    renameSync(`${files.runtime}.tmp`, files.runtime)
  }

  let closed: Promise<void> | undefined
  const close = () =>
    (closed ??= (async () => {
      // Code 1000 tells web3.js the close is deliberate, so it does not keep reconnecting.
      await manager?.close()
      await agent?.close()
      for (const client of wss.clients) client.close(1000, 'localnet stopping')
      http.closeAllConnections()
      wsHttp.closeAllConnections()
      proxy.closeAllConnections()
      await Promise.all([http, wsHttp, proxy].map((server) => new Promise((r) => server.close(r))))
      for (const service of services) await service.close?.()
      await secrets.service.close()
      node.chain.compact()
      rmSync(files.runtime, {force: true})
    })())
  if (options.node) {
    try {
      const nodeOptions = {...options.node, allowedOrigins: options.allowedOrigins}
      const images = {sizes: spec.images, defaultSize: spec.defaultImageSize}
      const started = await startNode(node, options.dataDir, secretsUrl, {markets, images}, nodeOptions, publish)
      if ('off' in started) runtime.node = started
      else {
        agent = started
        runtime.gatewayUrl = started.gateway.url
        runtime.gatewayHttpsUrl = started.gateway.httpsUrl
        runtime.caCertificate = started.caFile
        runtime.frpServerAddress = frpServerAddress(started.gateway.url, started.gateway.httpsUrl)
        // Every local process shares 127.0.0.1 with the nodes: none of them may lock one out of job logins.
        for (const {address} of started.nodes()) secrets.service.exemptFromLoginLimits(address)
      }
    } catch (error) {
      await close()
      throw error
    }
  }
  if (options.deploymentManager !== false) {
    try {
      manager = await startLocalnetManager(options.dataDir, node, runtime, options.allowedOrigins, options.cooldowns, {
        // Its tunnel watch follows the gateway's deployment proxies in process, as the network's follows its FRP
        // server's stream.
        proxyEvents: agent?.gateway.proxyEvents,
        // Its autoscaling follows the traffic of the gateway, in process.
        traffic: agent?.gateway,
        tunnelGraceMs: options.tunnelGraceMs,
        drainTimeoutMs: options.drainTimeoutMs,
      })
      runtime.deploymentManager = manager.url
      if (agent) {
        // The gateway serves each deployment's stable URL from the manager's replicas; a drain waits for the
        // requests the gateway has in flight to the job.
        const {gateway} = agent
        const nodes = agent
        gateway.useDeployments(localnetDeploymentRoutes(manager, nodes))
        manager.context.draining?.countInFlightWith((job) => gateway.inFlight(job))
        manager.context.gateway = {
          deploymentUrl: (deployment, port) => gateway.deploymentUrl(deployment, port),
          online: (job, port) => replicaOnline(nodes, job.job, port),
        }
      }
    } catch (error) {
      await close()
      throw error
    }
  }
  // A node that is not running (--no-node, or beyond a smaller --nodes than last time) must not wait in the queue,
  // or `list` would start jobs on it.
  const running = (m: OpenedMarket) => agent?.marketNodes.filter((n) => n.market.address === m.address).length ?? 0
  for (const market of markets) {
    const address = new PublicKey(market.address)
    const stale =
      market.slug === DEFAULT_MARKET_SLUG
        ? nodeKeyFilesFrom(options.dataDir, running(market))
        : marketNodeKeyFilesFrom(options.dataDir, market.slug, running(market))
    for (const file of stale) node.dequeueNode(loadOrCreateKeypair(file).keypair.publicKey, address)
  }
  publish()
  return {node, runtime, agent, manager, close}
}

/** The host and port of each of the gateway's URLs (`node.localhost:28980`): what a `<hash>.` goes before. */
function frpServerAddress(http: string, https: string | null): {http: string; https: string} | null {
  return https === null ? null : {http: new URL(http).host, https: new URL(https).host}
}

/**
 * The manager's settings: none set. The user's settings (an RPC URL in the environment, a profile, the config file)
 * point their commands elsewhere, never the localnet's own services at anything but the localnet. (Hints name no
 * variable: settings.ts, which names them, imports localnet/; none is needed, as the localnet's store takes uploads.)
 */
const UNSET_SETTINGS: MarketSettings = {
  network: 'localnet',
  configFile: '',
  typed: () => undefined,
  envName: (key) => `the ${key} setting`,
}

/**
 * The deployment manager inside the localnet: it reaches the chain through the localnet's own RPC, as any client
 * does, and keeps its database and vault key beside the secrets service's.
 */
async function startLocalnetManager(
  dataDir: string,
  node: Localnet,
  runtime: LocalnetRuntime,
  allowedOrigins: readonly string[] | undefined,
  cooldowns: CooldownsGiven | undefined,
  settings: Pick<ManagerOptions, 'proxyEvents' | 'tunnelGraceMs' | 'drainTimeoutMs' | 'traffic'>,
): Promise<RunningManager> {
  const {rpcUrl, gatewayUrl} = runtime
  const net = marketNetwork(UNSET_SETTINGS, {
    rpcUrl,
    contentStoreUrl: rpcUrl,
    gatewayUrl,
    programId: node.chain.programId,
    mint: node.mint,
    market: node.market,
    node: null,
    rewards: localnetRewardsAccounts(node.mint),
  })
  // The credit routes of the network's public API, beside the manager as on the network: the ledger in the data
  // directory, jobs listed by the localnet's credits wallet, which the faucet keeps able to pay.
  const files = localnetFiles(dataDir)
  const ledger = openCreditLedger(files.credits)
  const wallet = walletFromBytes(loadOrCreateKeypair(files.creditsWallet).keypair.secretKey, files.creditsWallet)
  const fund = async (lamports: bigint, tokens: bigint) =>
    void (await fundFromFaucet(dataDir, runtime, node.mint, wallet.publicKey, {lamports, tokens}))
  let manager: RunningManager
  try {
    manager = await startDeploymentManager({
      dataDir: files.deployments,
      net,
      network: 'localnet',
      port: 0,
      log: (line) => process.stderr.write(`${line}\n`),
      credits: creditRoutes({ledger, net, wallet, fund}),
      allowedOrigins,
      cooldowns,
      ...settings,
    })
  } catch (error) {
    ledger.close()
    throw error
  }
  return {
    ...manager,
    async close() {
      await manager.close()
      ledger.close()
    },
  }
}

async function route(
  req: IncomingMessage,
  res: ServerResponse,
  rpc: RpcHandler,
  services: SubService[],
  policy: LoopbackPolicy,
): Promise<void> {
  try {
    const refusal = webPageRefusal(req, policy)
    if (refusal) {
      req.resume()
      return sendJson(res, refusal.status, {error: refusal.message})
    }
    const path = new URL(req.url ?? '/', 'http://localhost').pathname
    const service = services.find((s) => s.matches(path))
    if (service) return await service.handle(req, res, path)
    if (req.method === 'GET' && path === '/health') {
      res.writeHead(200, {'content-type': 'text/plain'})
      res.end('ok')
      return
    }
    if (req.method !== 'POST' || path !== '/') return sendJson(res, 404, {error: `no route for ${req.method} ${path}`})
    // A form or text/plain body is what a web page can send without asking first: JSON-RPC takes JSON only.
    if (!isJsonContentType(req.headers['content-type'])) {
      req.resume()
      const message = 'Invalid request: JSON-RPC takes content-type application/json'
      return sendJson(res, 415, {jsonrpc: '2.0', error: {code: -32600, message}, id: null})
    }
    const body = await readBody(req, MAX_RPC_BODY)
    if (body === null) {
      return sendTooLarge(req, res, {jsonrpc: '2.0', error: {code: -32600, message: 'request too large'}, id: null})
    }
    let request: unknown
    try {
      request = JSON.parse(body.toString('utf8'))
    } catch {
      return sendJson(res, 200, {jsonrpc: '2.0', error: {code: -32700, message: 'Parse error'}, id: null})
    }
    sendJson(res, 200, rpc.handleBody(request))
  } catch (error) {
    if (!res.headersSent) sendJson(res, 500, {error: (error as Error).message})
    else res.destroy()
  }
}

/** Listens on `port` and `port + 1`; with port 0, on the first free pair. */
async function listenPair(http: Server, ws: Server, port: number): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    await listen(http, port)
    const chosen = (http.address() as AddressInfo).port
    try {
      await listen(ws, chosen + 1)
      return chosen
    } catch (error) {
      await new Promise((r) => http.close(r))
      if (port !== 0 || attempt >= 20) throw error
    }
  }
}

async function listen(server: Server, port: number): Promise<void> {
  server.listen(port, LOCALNET_HOST)
  await Promise.race([once(server, 'listening'), once(server, 'error').then(([error]) => Promise.reject(error))])
}
