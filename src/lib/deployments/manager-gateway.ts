/**
 * `deployment serve`'s gateway: the stable URLs of its manager's deployments, `http://<id>.deploy.localhost:<port>/`,
 * served by the localnet's gateway code (gateway/gateway.ts: one proxy) in front of the replicas' own service URLs
 * (https on devnet and mainnet, the node gateway's on the localnet). Its drains wait for the requests it has in
 * flight (and, on a PostgreSQL shared with other managers, those their gateways wrote to it: draining.ts); what it
 * counts is its manager's load (manager.ts wires it).
 */
import {Gateway} from '../gateway/gateway.js'
import type {HoldBounds} from '../gateway/holding.js'
import type {ManagerContext} from './context.js'
import {serviceUrlRoutes} from './stable-routes.js'

/** A manager's gateway, listening. */
export interface ManagerGatewayServer {
  /** The stable URL of a deployment's first exposed port. */
  deploymentUrl(deployment: string): string
  /** The port it listens on (127.0.0.1). */
  port: number
  gateway: Gateway
  close(): Promise<void>
}

/** Starts a gateway on 127.0.0.1:`port` (0 picks a free one) in front of the manager whose context is `ctx`. */
export async function startManagerGateway(
  ctx: ManagerContext,
  port: number,
  options: {hold?: Partial<HoldBounds>; allowedOrigins?: readonly string[]} = {},
): Promise<ManagerGatewayServer> {
  const gateway = new Gateway({hold: options.hold, allowedOrigins: options.allowedOrigins})
  const url = await gateway.listen(port)
  gateway.useDeployments(serviceUrlRoutes(ctx))
  ctx.draining?.countInFlightWith((job) => gateway.inFlight(job))
  ctx.gateway = {
    deploymentUrl: (deployment, p) => gateway.deploymentUrl(deployment, p),
    // The manager's own probe is what it knows of a replica it does not run (the tunnel watch's reading).
    online: (job) => job.tunnel === 'up',
  }
  return {
    deploymentUrl: (deployment) => gateway.deploymentUrl(deployment),
    port: Number(new URL(url).port),
    gateway,
    close: () => gateway.close(),
  }
}
