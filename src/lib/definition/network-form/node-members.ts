/**
 * The members of the network's newer format that say how a node runs a job rather than what each container is:
 * `execution` (groups, `depends_on`, `stop_if_dependent_stops`), `restart_policy`, continuous health checks,
 * `results`, named volumes (`container/create-volume`, `volumes`) and `global.variables`. The reader takes them out
 * of a definition the network's validator accepted, so the rest is read as spec 0.1, and hands them to the
 * localnet's node beside it, with the network node's meaning (nosana-ci/nosana-cli, TaskManager and Provider).
 */
import {type DefinitionIssue, makeIssue} from '../issue.js'
import {isObject, type PathSegment} from '../paths.js'
import {unresolvedLiterals} from './literals.js'
import type {NetworkDefinition} from './types.js'

/** When a node starts an operation's command again after it exits (a container engine's restart policy). */
export type RestartRule =
  | {policy: 'no'}
  | {policy: 'always'}
  | {policy: 'unless-stopped'}
  /** `tries` restarts at most; none (or 0, which the network's node passes on as none) restarts without end. */
  | {policy: 'on-failure'; tries?: number}

/** One `results` entry: lines of the named streams matched against `regex` (every stream when none is named). */
export interface ResultRule {
  regex: string
  logType?: string[]
}

/** How the node runs one operation, beyond what spec 0.1 says of it. */
export interface OpMembers {
  id: string
  /** A `container/create-volume` operation: the volume it makes, which spec 0.1 has no words for. */
  createsVolume?: string
  /** Its `execution.group`, or its own id: a group of one. */
  group: string
  /** Whether `execution.group` named the group (the network's node compares these for a dependency). */
  grouped: boolean
  dependsOn: string[]
  stopIfDependentStops: boolean
  restart: RestartRule
  results?: Record<string, ResultRule>
  volumes: {name: string; dest: string}[]
  /** Per exposed port, the health checks that are `continuous`, in the order written. */
  continuous: Map<number, boolean[]>
}

/** What the localnet's node runs beyond spec 0.1, for every operation in the definition's order. */
export interface NodeMembers {
  ops: OpMembers[]
  /** `global.variables`, read by `%%global.variables.NAME%%` literals. */
  variables: Record<string, string>
  /**
   * The top-level `deployment_id`: the node serves each exposed operation at the deployment's domain and puts each of
   * its ports in the load-balancer group of the deployment (Provider.ts of the network's node).
   */
  deploymentId?: string
}

/** The groups in the order the network's node runs them: the order of each group's first operation. */
export function groupOrder(members: NodeMembers): string[] {
  return [...new Set(members.ops.map((op) => op.group))]
}

/**
 * Takes the node members out of `model` (a copy the caller owns), pushing an issue for each it cannot run: a
 * dependency on an unknown operation, on itself, across groups, on an operation of a later group, or a cycle.
 */
export function takeNodeMembers(model: NetworkDefinition, issues: DefinitionIssue[]): NodeMembers {
  const variables = isObject(model.global?.variables) ? (model.global.variables as Record<string, string>) : {}
  if (model.global) {
    delete model.global.variables
    if (Object.keys(model.global).length === 0) delete model.global
  }
  const ops: OpMembers[] = []
  for (const op of model.ops) {
    const args = op.args
    const execution = isObject(op.execution) ? op.execution : {}
    delete op.execution
    const members: OpMembers = {
      id: op.id,
      group: typeof execution.group === 'string' ? execution.group : op.id,
      grouped: typeof execution.group === 'string',
      dependsOn: Array.isArray(execution.depends_on) ? (execution.depends_on as string[]) : [],
      stopIfDependentStops: execution.stop_if_dependent_stops === true,
      restart: restartRule(args.restart_policy),
      volumes: Array.isArray(args.volumes) ? (args.volumes as {name: string; dest: string}[]) : [],
      continuous: continuousChecks(args.expose),
    }
    if (isObject(op.results)) members.results = resultRules(op.results)
    delete op.results
    delete args.restart_policy
    delete args.volumes
    if (op.type === 'container/create-volume') members.createsVolume = String(args.name)
    // One exposed port written as an object, which the network's nodes take as a list of one.
    if (isObject(args.expose)) args.expose = [args.expose]
    ops.push(members)
  }
  checkExecution(ops, issues)
  unresolvedLiterals(model.ops, variables, issues)
  return {ops, variables}
}

/**
 * What the network's own nodes would fail or never start, whichever network runs it: a `depends_on` naming an
 * unknown operation, itself, one across groups or of a later group, a cycle, an unknown `%%global.variables.NAME%%`.
 */
export function nodeRefusals(document: NetworkDefinition): DefinitionIssue[] {
  const issues: DefinitionIssue[] = []
  takeNodeMembers(structuredClone(document), issues)
  return issues.filter((issue) => issue.code === 'invalid_value')
}

function restartRule(value: unknown): RestartRule {
  if (value === 'always' || value === 'unless-stopped' || value === 'on-failure') return {policy: value}
  if (isObject(value) && value.policy === 'on-failure') {
    const tries = value.restart_tries
    return typeof tries === 'number' && tries > 0 ? {policy: 'on-failure', tries} : {policy: 'on-failure'}
  }
  return {policy: 'no'}
}

function resultRules(results: Record<string, unknown>): Record<string, ResultRule> {
  return Object.fromEntries(
    Object.entries(results).map(([name, rule]) => [
      name,
      typeof rule === 'string'
        ? {regex: rule}
        : {regex: String((rule as ResultRule).regex), logType: (rule as ResultRule).logType},
    ]),
  )
}

/** Notes which checks are continuous and drops the member, which spec 0.1 does not have. */
function continuousChecks(expose: unknown): Map<number, boolean[]> {
  const found = new Map<number, boolean[]>()
  for (const port of Array.isArray(expose) ? expose : [expose]) {
    if (!isObject(port) || !Array.isArray(port.health_checks)) continue
    const flags = (port.health_checks as Record<string, unknown>[]).map((check) => {
      const continuous = check.continuous === true
      if (isObject(check)) delete check.continuous
      return continuous
    })
    if (typeof port.port === 'number') found.set(port.port, flags)
  }
  return found
}

/**
 * The network's node refuses a dependency on an unknown operation, on itself or across groups (its
 * validateExecutionPlan); a cycle, or a dependency on an operation of a later group, it never starts, silently.
 * Both are refused here, before paying, naming the ids.
 */
function checkExecution(ops: OpMembers[], issues: DefinitionIssue[]): void {
  const byId = new Map(ops.map((op, i) => [op.id, {op, i}]))
  const groups = groupOrder({ops, variables: {}})
  const at = (i: number, j: number): PathSegment[] => ['ops', i, 'execution', 'depends_on', j]
  for (const [i, op] of ops.entries()) {
    for (const [j, dep] of op.dependsOn.entries()) {
      const target = byId.get(dep)
      const problem = !target
        ? `names \`${dep}\`, which is no operation of this job`
        : dep === op.id
          ? `names \`${dep}\` itself: an operation cannot wait for itself`
          : op.grouped !== target.op.grouped || (op.grouped && target.op.group !== op.group)
            ? `names \`${dep}\` of ${groupName(target.op)}, and \`${op.id}\` is in ${groupName(op)}: the network's nodes fail a dependency across groups`
            : groups.indexOf(target.op.group) > groups.indexOf(op.group)
              ? `names \`${dep}\`, which runs in a later group: \`${op.id}\` would never start`
              : null
      if (problem) issues.push(makeIssue(at(i, j), 'invalid_value', problem, 'name an operation that starts before it'))
    }
  }
  for (const cycle of cycles(ops, byId)) {
    const first = byId.get(cycle[0]!)!
    issues.push(
      makeIssue(
        ['ops', first.i, 'execution', 'depends_on'],
        'invalid_value',
        `\`depends_on\` goes round in a cycle (${[...cycle, cycle[0]].join(' -> ')}): none of them would ever start`,
        'remove one dependency of the cycle',
      ),
    )
  }
}

function groupName(op: OpMembers): string {
  return op.grouped ? `group \`${op.group}\`` : 'no group'
}

/** Each dependency cycle once, as the ids in order from its first operation in the definition. */
function cycles(ops: OpMembers[], byId: Map<string, {op: OpMembers; i: number}>): string[][] {
  const found: string[][] = []
  const done = new Set<string>()
  const seen = new Set<string>()
  for (const start of ops) {
    const path: string[] = []
    const onPath = new Set<string>()
    const visit = (id: string) => {
      if (onPath.has(id)) {
        const cycle = path.slice(path.indexOf(id))
        const key = [...cycle].sort().join('\0')
        if (!seen.has(key)) {
          seen.add(key)
          const lowest = cycle.reduce((a, b) => (byId.get(a)!.i <= byId.get(b)!.i ? a : b))
          const k = cycle.indexOf(lowest)
          found.push([...cycle.slice(k), ...cycle.slice(0, k)])
        }
        return
      }
      if (done.has(id)) return
      path.push(id)
      onPath.add(id)
      for (const dep of byId.get(id)?.op.dependsOn ?? []) if (byId.has(dep) && dep !== id) visit(dep)
      path.pop()
      onPath.delete(id)
    }
    visit(start.id)
    done.add(start.id)
  }
  return found
}
