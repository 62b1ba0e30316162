/** Where a localnet keeps its files, and its default port. */
import {join} from 'node:path'

import {ExitCode, GpunetError} from '../errors.js'

/** How far above its RPC port a localnet's gateway listens unless told: 28899 gives the default 28980. */
const GATEWAY_PORT_OFFSET = 81

/**
 * The gateway's port when --gateway-port and GPUNET_GATEWAY_PORT are not given: it follows the RPC port (+81), so
 * two localnets on two RPC ports do not share a gateway; 0 (any free RPC pair) gives 0 (any free port).
 */
export function defaultGatewayPort(rpcPort: number): number {
  if (rpcPort === 0 || rpcPort + GATEWAY_PORT_OFFSET > 65_535) return 0
  return rpcPort + GATEWAY_PORT_OFFSET
}

/**
 * The gateway's https port when --gateway-https-port and GPUNET_GATEWAY_HTTPS_PORT are not given: the next one after
 * the gateway's, as that follows the RPC port (28980 gives 28981); 0 gives 0 (any free port).
 */
export function defaultGatewayHttpsPort(gatewayPort: number): number {
  if (gatewayPort === 0 || gatewayPort + 1 > 65_535) return 0
  return gatewayPort + 1
}

/** The one error for a gateway https port another program holds: it names the flag and the variable that move it. */
export function gatewayHttpsPortInUse(port: number): GpunetError {
  return new GpunetError('gateway_https_port_in_use', `gateway https port ${port} is in use on 127.0.0.1`, {
    exitCode: ExitCode.UNAVAILABLE,
    hint:
      'Another program holds it: choose another with `--gateway-https-port N` or GPUNET_GATEWAY_HTTPS_PORT=N (0 ' +
      'picks a free one), or turn the node off with --no-node.',
    fields: {port},
  })
}

/** The one error for a gateway port another program holds: it names the flag and the variable that move it. */
export function gatewayPortInUse(port: number): GpunetError {
  return new GpunetError('gateway_port_in_use', `gateway port ${port} is in use on 127.0.0.1`, {
    exitCode: ExitCode.UNAVAILABLE,
    hint:
      'Another program holds it: choose another with `--gateway-port N` or GPUNET_GATEWAY_PORT=N (0 picks a free ' +
      'one), or turn the node off with --no-node.',
    fields: {port},
  })
}

/** The one error for a localnet port pair another program holds, from every command that starts a localnet. */
export function localnetPortInUse(port: number): GpunetError {
  return new GpunetError('port_in_use', `port ${port} or ${port + 1} is in use on 127.0.0.1`, {
    exitCode: ExitCode.UNAVAILABLE,
    hint:
      'Another program holds it: start the localnet on other ports with `gpunet localnet start --port N`, or set ' +
      'GPUNET_LOCALNET_PORT=N for every command (the WebSocket endpoint takes N+1; 0 picks any free pair).',
    fields: {port},
  })
}

/**
 * The gateway's certificate authority and server certificate (certificates.ts). Apart from localnetFiles, which
 * `localnet reset` wipes: a client that trusts the authority goes on trusting it after a reset.
 */
export function localnetTlsFiles(dataDir: string) {
  const dir = join(dataDir, 'tls')
  return {
    dir,
    /** The authority's certificate: the file a client trusts (`NODE_EXTRA_CA_CERTS`, curl `--cacert`). */
    caCert: join(dir, 'ca.pem'),
    /** The authority's private key (mode 0600). */
    caKey: join(dir, 'ca-key.pem'),
    /** The gateway's server certificate and its key (mode 0600). */
    cert: join(dir, 'gateway.pem'),
    key: join(dir, 'gateway-key.pem'),
  }
}

/** The files of a localnet data directory. */
export function localnetFiles(dataDir: string) {
  return {
    /** Addresses and seeds created on first start. */
    genesis: join(dataDir, 'genesis.json'),
    /** The faucet's keypair: mint authority of the payment token and source of airdrops (mode 0600). */
    faucet: join(dataDir, 'faucet.json'),
    /** Written by the running process: its pid and URLs; removed when it stops. */
    runtime: join(dataDir, 'localnet.json'),
    /** Holds the pid of the process serving this directory. */
    lock: join(dataDir, 'lock'),
    /** Output of a localnet started in the background. */
    log: join(dataDir, 'localnet.log'),
    /** Content store files. */
    content: join(dataDir, 'ipfs'),
    /** Chain snapshot, journal and signature statuses. */
    chain: join(dataDir, 'chain'),
    /** The localnet node's keypair (mode 0600): it takes jobs with `work` and is paid by `finish`. */
    node: join(dataDir, 'node.json'),
    /** The keypairs of its further nodes (`--nodes N`): `node-2.json` and on (mode 0600). */
    nodes: join(dataDir, 'nodes'),
    /** The in-process secrets service: its SQLite database and its key file (mode 0600). */
    secrets: join(dataDir, 'secrets'),
    /** The in-process deployment manager: its SQLite database and the key sealing its vaults (mode 0600). */
    deployments: join(dataDir, 'deployments'),
    /** The credit ledger of the localnet's credit routes (credits/ledger.ts). */
    credits: join(dataDir, 'credits', 'credits.db'),
    /** The wallet that lists credit-paid jobs, as the network's API lists them with its own (mode 0600). */
    creditsWallet: join(dataDir, 'credits', 'wallet.json'),
    /** The localnet's markets: each one's terms, nodes and address on this chain (localnet/markets/record.ts). */
    markets: join(dataDir, 'markets.json'),
    /** The localnet's indexer: every job it saw, one JSON line per change (job-index.ts). */
    jobIndex: join(dataDir, 'jobs-index.jsonl'),
  }
}
