/**
 * The network's own names of jobs' ports, answered by the gateway as the network's FRP server (frps) answers them:
 * each port at its expose-id hash, and each exposed operation of a deployment at its deployment domain, spread over
 * the members of a load-balancer group `<deploymentHash>-<port>` (node/network-names.ts works the names out, as the
 * network's node does).
 *
 * A group behaves as frps's HTTP group with frpc's health checks: requests go round the members in the order they
 * joined; a member whose port has an HTTP GET check expecting 200 is checked on that path every
 * GROUP_CHECK_INTERVAL_MS, leaves after GROUP_CHECK_MAX_FAILED failures in a row and rejoins at its next pass; a
 * port without one is a member while it is served. A domain is held by the first group that claimed it (frps's vhost
 * router refuses a second group on the same domain) for as long as that group has a member; then the group of the
 * earliest member left takes it. With no member the name answers frps's 404 at once: no holding, no resending, no
 * draining, no ejection. Those are gpunet's own, on a deployment's stable URL (stable-url.ts).
 *
 * Each member's state is published as frps streams it (proxy-events.ts): registered once it serves (its port ready
 * and passing its checks), unregistered `lost` when it leaves after its failed checks or its node is gone, and
 * `graceful` when its operation ended. The localnet's deployment manager reads its tunnel watch from that.
 */
import {httpProbe} from '../http/client.js'
import type {NetworkName} from '../node/network-names.js'
import type {JobRoutes, Upstream} from './job-routes.js'
import {type ProxyCloseReason, ProxyEvents} from './proxy-events.js'

/** How often a member's health path is checked: frpc's default `healthCheck.intervalSeconds` (10). */
export const GROUP_CHECK_INTERVAL_MS = 10_000

/**
 * Failures in a row before a member leaves its group. The network's frpc template (inside its frpc image) is not
 * public; frpc's own default `maxFailed` is 1. Three is gpunet's choice (issue 53): one slow answer does not take a
 * replica out.
 */
export const GROUP_CHECK_MAX_FAILED = 3

/** How long one check may take before it counts as failed: frpc's default `healthCheck.timeoutSeconds` (3). */
export const GROUP_CHECK_TIMEOUT_MS = 3000

/** Every network name is 44 base58 characters (the sdk's `getExposeIdHash`): any other label is none of them. */
const LABEL_LENGTH = 44

/** The gateway's options for the network's names. */
export interface NetworkNameOptions {
  checkIntervalMs?: number
  checkTimeoutMs?: number
  maxFailed?: number
}

/** One job port in a load-balancer group. */
interface Member {
  job: string
  port: number
  group: string
  opId: string
  deploymentId?: string
  healthPath?: string
  /** Failed checks in a row. */
  failures: number
  healthy: boolean
  /** When it joined: a free domain goes to the group of the earliest member. */
  joined: number
  timer?: NodeJS.Timeout
  gone: boolean
  /** What was last published of it: true once it serves, false again when it stopped serving. */
  registered: boolean
}

interface Group {
  /** The domain (lowercased) the group's first member named: frps binds a group to one domain. */
  domain: string
  members: Member[]
  /** Round-robin counter, as frps's group keeps one. */
  turn: number
}

/** What a host's label names among the network's names. */
export type NamedTarget = {upstream: Upstream} | {empty: true}

/** The network's names of the jobs' ports, their groups and their health checks. */
export class NetworkNames {
  /** The deployment proxies' lifecycle, as frps streams it (proxy-events.ts). */
  readonly events = new ProxyEvents()
  /** Expose-id hash (lowercased) -> the job's port. */
  private readonly ports = new Map<string, {job: string; port: number}>()
  private readonly groups = new Map<string, Group>()
  /** Deployment domain (lowercased) -> the groups bound to it, and the one holding it. */
  private readonly domains = new Map<string, {groups: Set<string>; holder: string | null}>()
  /** Job (lowercased) -> its names and members, to take them down with its ports. */
  private readonly byJob = new Map<string, {labels: Map<number, string>; members: Member[]}>()
  private joined = 0
  private readonly intervalMs: number
  private readonly timeoutMs: number
  private readonly maxFailed: number

  constructor(
    private readonly routes: JobRoutes,
    options: NetworkNameOptions = {},
  ) {
    this.intervalMs = options.checkIntervalMs ?? GROUP_CHECK_INTERVAL_MS
    this.timeoutMs = options.checkTimeoutMs ?? GROUP_CHECK_TIMEOUT_MS
    this.maxFailed = options.maxFailed ?? GROUP_CHECK_MAX_FAILED
  }

  /** Serves the job's ports under their network names (again: a port named before is taken down first). */
  serve(job: string, names: readonly NetworkName[]): void {
    this.withdraw(
      job,
      names.map((n) => n.port),
    )
    const key = job.toLowerCase()
    const mine = this.byJob.get(key) ?? {labels: new Map<number, string>(), members: []}
    this.byJob.set(key, mine)
    for (const {port, label, deployment} of names) {
      this.ports.set(label.toLowerCase(), {job, port})
      mine.labels.set(port, label.toLowerCase())
      if (!deployment) continue
      const domain = deployment.domain.toLowerCase()
      const group = this.groups.get(deployment.group) ?? {domain, members: [], turn: 0}
      // frps refuses a proxy naming another domain for a group already bound to one: it gets no group.
      if (group.domain !== domain) continue
      this.groups.set(deployment.group, group)
      const bound = this.domains.get(domain) ?? {groups: new Set<string>(), holder: null}
      bound.groups.add(deployment.group)
      this.domains.set(domain, bound)
      const member: Member = {
        job,
        port,
        group: deployment.group,
        opId: deployment.opId,
        ...(deployment.id === undefined ? {} : {deploymentId: deployment.id}),
        healthPath: deployment.healthPath,
        failures: 0,
        // Its port is served once the node's own checks passed: as frpc's first check passing, it joins then.
        healthy: true,
        joined: this.joined++,
        gone: false,
        registered: false,
      }
      group.members.push(member)
      mine.members.push(member)
      this.publish(member)
      if (member.healthPath !== undefined) this.schedule(member)
    }
  }

  /** The job's `port` is served now (the node's readiness passed): its member registers. */
  ready(job: string, port: number): void {
    for (const member of this.byJob.get(job.toLowerCase())?.members ?? [])
      if (member.port === port) this.publish(member)
  }

  /**
   * Takes the network names of the job's given ports down, with their group memberships and checks; their members
   * unregister for `reason` (`graceful`: the operation ended; `lost`: the node is gone).
   */
  withdraw(job: string, ports: readonly number[], reason: ProxyCloseReason = 'graceful'): void {
    const key = job.toLowerCase()
    const mine = this.byJob.get(key)
    if (!mine) return
    for (const port of ports) {
      const label = mine.labels.get(port)
      if (label !== undefined && this.ports.get(label)?.port === port) this.ports.delete(label)
      mine.labels.delete(port)
    }
    const leaving = mine.members.filter((m) => ports.includes(m.port))
    mine.members = mine.members.filter((m) => !ports.includes(m.port))
    for (const member of leaving) this.leave(member, reason)
    if (mine.labels.size === 0 && mine.members.length === 0) this.byJob.delete(key)
  }

  /** Takes every network name of the job down (its members unregister for `reason`, as withdraw's). */
  remove(job: string, reason: ProxyCloseReason = 'graceful'): void {
    const mine = this.byJob.get(job.toLowerCase())
    if (mine) this.withdraw(job, [...new Set([...mine.labels.keys(), ...mine.members.map((m) => m.port)])], reason)
  }

  /**
   * What a host's label (lowercased) names: the port to send the request to, a network name no member serves now
   * (`empty`), or null for a label that is none of the network's names. One map lookup for any other label.
   */
  target(label: string): NamedTarget | null {
    if (label.length !== LABEL_LENGTH) return null
    const port = this.ports.get(label)
    if (port) {
      const hostPort = this.routes.hostPort(port.job, port.port)
      return hostPort === null ? {empty: true} : {upstream: {job: port.job, hostPort}}
    }
    const domain = this.domains.get(label)
    if (!domain) return null
    const group = this.holderOf(domain)
    if (!group) return {empty: true}
    const members = this.serving(group)
    const member = members[group.turn++ % members.length]!
    return {upstream: {job: member.job, hostPort: this.routes.hostPort(member.job, member.port)!}}
  }

  /** Stops every check (the gateway closes). */
  close(): void {
    // The gateway closing is no proxy's end: nothing is published (frps going away ends its stream, not a proxy).
    for (const mine of this.byJob.values()) for (const member of mine.members) this.leave(member, null)
    this.byJob.clear()
  }

  /** The group holding a domain now: the one holding it while it has a member, else the earliest member's. */
  private holderOf(domain: {groups: Set<string>; holder: string | null}): Group | null {
    const held = domain.holder === null ? undefined : this.groups.get(domain.holder)
    if (held && this.serving(held).length > 0) return held
    let earliest: Member | undefined
    for (const key of domain.groups) {
      const [first] = this.serving(this.groups.get(key)!)
      if (first && (!earliest || first.joined < earliest.joined)) earliest = first
    }
    domain.holder = earliest?.group ?? null
    return earliest ? this.groups.get(earliest.group)! : null
  }

  /** The members of a group that get requests now: served (their port is up) and passing their checks. */
  private serving(group: Group): Member[] {
    return group.members.filter((m) => m.healthy && this.routes.hostPort(m.job, m.port) !== null)
  }

  /** Publishes the member's state when it changed: it serves while there, passing its checks, its port served. */
  private publish(member: Member, reason: ProxyCloseReason = 'lost'): void {
    const serves = !member.gone && member.healthy && this.routes.hostPort(member.job, member.port) !== null
    if (serves === member.registered) return
    member.registered = serves
    this.events.publish({
      type: serves ? 'registered' : 'unregistered',
      job: member.job,
      opId: member.opId,
      port: member.port,
      ...(member.deploymentId === undefined ? {} : {deploymentId: member.deploymentId}),
      ...(serves ? {} : {reason}),
      timestamp: Date.now(),
    })
  }

  private leave(member: Member, reason: ProxyCloseReason | null): void {
    member.gone = true
    clearTimeout(member.timer)
    if (reason !== null) this.publish(member, reason)
    const group = this.groups.get(member.group)
    if (!group) return
    group.members = group.members.filter((m) => m !== member)
    if (group.members.length > 0) return
    // Its last member gone, the group is no more (frps unregisters its route), and its domain is free.
    this.groups.delete(member.group)
    const domain = this.domains.get(group.domain)
    domain?.groups.delete(member.group)
    if (domain?.holder === member.group) domain.holder = null
    if (domain?.groups.size === 0) this.domains.delete(group.domain)
  }

  /** Checks the member's health path after an interval, then again after each check, until it leaves. */
  private schedule(member: Member): void {
    member.timer = setTimeout(() => void this.check(member), this.intervalMs)
    // A check never holds the process open: the gateway's close stops them anyway.
    member.timer.unref()
  }

  private async check(member: Member): Promise<void> {
    const hostPort = this.routes.hostPort(member.job, member.port)
    // A port not served (yet, or any more) is no member anyway: nothing to check until it is.
    if (hostPort !== null) {
      const passed = await probe(hostPort, member.healthPath!, this.timeoutMs)
      if (member.gone) return
      if (passed) {
        member.failures = 0
        member.healthy = true
      } else if (++member.failures >= this.maxFailed) member.healthy = false
      // Left after its failed checks: lost (frpc reports a backend failing its check so); back on a pass.
      this.publish(member, 'lost')
    }
    if (!member.gone) this.schedule(member)
  }
}

/** One check as frpc makes it: GET the path on the member's port; any 2xx passes, anything else or no answer fails. */
async function probe(hostPort: number, path: string, timeoutMs: number): Promise<boolean> {
  try {
    // Joined, not resolved against the origin: a path such as `//host/x` stays on the member's port, as frpc's does.
    const url = new URL(`http://127.0.0.1:${hostPort}${path.startsWith('/') ? '' : '/'}${path}`)
    const answer = await httpProbe(url, {method: 'GET', timeoutMs})
    return answer.status >= 200 && answer.status < 300
  } catch {
    return false
  }
}
