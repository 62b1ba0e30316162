/**
 * One PostgreSQL database per test process: suites in parallel workers never see each other's schemas,
 * connections or `pg_stat_activity` rows. Named `gpunet_test_<run>_<process>` (the run is the mocha parent's pid),
 * so a run drops its own and the leftovers of runs that are gone, never those of another run still going.
 */
import {isAlive} from '../../src/lib/process/alive.js'
import {DATABASE_URL_ENV} from './env.js'

const PREFIX = 'gpunet_test_'

/** This run's id: the parent's pid in a parallel worker, this process's own in a serial run. */
function runId(): number {
  return process.env.MOCHA_WORKER_ID === undefined ? process.pid : process.ppid
}

async function withAdmin<T>(
  url: string,
  work: (query: (sql: string) => Promise<{rows: {datname: string}[]}>) => Promise<T>,
): Promise<T> {
  const pg = (await import('pg')).default
  const client = new pg.Client({connectionString: url})
  await client.connect()
  try {
    return await work((sql) => client.query(sql))
  } finally {
    await client.end()
  }
}

/** Creates this process's database and points `GPUNET_TEST_DATABASE_URL` at it; nothing when it is not set. */
export async function ownTestDatabase(): Promise<void> {
  const url = process.env[DATABASE_URL_ENV]
  if (!url) return
  const name = `${PREFIX}${runId()}_${process.pid}`
  await withAdmin(url, (query) => query(`CREATE DATABASE ${name}`))
  const own = new URL(url)
  own.pathname = `/${name}`
  process.env[DATABASE_URL_ENV] = own.toString()
}

/** Drops this run's databases and those of runs whose process is gone. */
export async function dropTestDatabases(): Promise<void> {
  const url = process.env[DATABASE_URL_ENV]
  if (!url) return
  await withAdmin(url, async (query) => {
    const {rows} = await query(`SELECT datname FROM pg_database WHERE datname LIKE '${PREFIX}%'`)
    for (const {datname} of rows) {
      const run = Number(/^gpunet_test_(\d+)_\d+$/.exec(datname)?.[1])
      if (!Number.isInteger(run) || (run !== process.pid && isAlive(run))) continue
      await query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`)
    }
  })
}
