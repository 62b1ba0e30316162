import {execFile} from 'node:child_process'
import {existsSync} from 'node:fs'
import {chmod, copyFile, mkdir, mkdtemp, rm, symlink, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {promisify} from 'node:util'

import {detectRuntime, writePodmanConfig} from '../../src/lib/node/runtime/podman.js'

const run = promisify(execFile)

/** A busybox image without bash, whose default command prints "image default". */
export const TEST_IMAGE = 'localhost/gpunet-test-busybox:latest'
/** The same image with a `bash` that says on stderr that it ran, then behaves as sh. */
export const TEST_IMAGE_WITH_BASH = 'localhost/gpunet-test-busybox-bash:latest'

/** An HTTP service on port 8080 that answers every request with its job's address (the node fills in %%global.job%%). */
export const ECHO_JOB = {
  version: '0.1',
  type: 'container',
  ops: [
    {
      id: 'web',
      type: 'container/run',
      args: {
        image: TEST_IMAGE,
        cmd: 'mkdir -p /tmp/w && echo -n %%global.job%% > /tmp/w/index.html && exec httpd -f -p 8080 -h /tmp/w',
        expose: 8080,
      },
    },
  ],
}

/**
 * An HTTP service on port 8080 answering `ok` (from /tmp/`marker`), whose continuous health check drives its
 * endpoint's ONLINE: the readiness a rollout, a rotation and a move wait for.
 */
export function okService(marker: string) {
  return {
    version: '0.1',
    type: 'container',
    ops: [
      {
        id: 'web',
        type: 'container/run',
        args: {
          image: TEST_IMAGE,
          cmd: [
            'sh',
            '-c',
            `mkdir -p /tmp/${marker} && echo ok > /tmp/${marker}/index.html && exec httpd -f -p 8080 -h /tmp/${marker}`,
          ],
          expose: [
            {
              port: 8080,
              health_checks: [{type: 'http', method: 'GET', path: '/', expected_status: 200, continuous: true}],
            },
          ],
        },
      },
    ],
  }
}

const APPLETS = ['sh', 'echo', 'cat', 'env', 'sleep', 'httpd', 'mkdir', 'pwd', 'printf', 'sha256sum', 'cut', 'wc']
const FAKE_BASH = '#!/bin/sh\necho via-bash >&2\nexec /bin/sh "$@"\n'

/**
 * Makes a mocha suite need podman: it fails under CI=true when podman cannot run here, and otherwise skips
 * with a loud notice. Also builds the test images (once per machine: they are cached by tag).
 */
export function requirePodman(): {dataDir: () => string} {
  let dataDir = ''
  before(async function () {
    this.timeout(120_000)
    dataDir = await mkdtemp(join(tmpdir(), 'gpunet-podman-test-'))
    const detection = await detectRuntime({dataDir})
    const reason = !detection.available
      ? detection.reason
      : !existsSync('/bin/busybox')
        ? 'the test image needs /bin/busybox (apt-get install busybox-static)'
        : undefined
    if (reason) {
      if (process.env.CI === 'true') throw new Error(`podman is required under CI=true: ${reason}`)
      process.stderr.write(`\n  !!! SKIPPING podman tests: ${reason}\n\n`)
      this.skip()
    }
    await buildTestImages(dataDir)
  })
  after(() => dataDir && rm(dataDir, {recursive: true, force: true}))
  return {dataDir: () => dataDir}
}

/** Runs podman with gpunet's configuration from `dataDir`. */
export async function podman(dataDir: string, args: string[]): Promise<{code: number; stdout: string}> {
  const env = {...process.env, ...(await writePodmanConfig(dataDir))}
  try {
    const {stdout} = await run('podman', args, {env})
    return {code: 0, stdout}
  } catch (error) {
    const failed = error as {code?: number; stdout?: string}
    return {code: typeof failed.code === 'number' ? failed.code : 1, stdout: failed.stdout ?? ''}
  }
}

/** Builds the test images from /bin/busybox unless podman has them (cached by tag). */
export async function buildTestImages(dataDir: string): Promise<void> {
  for (const [tag, withBash] of [
    [TEST_IMAGE, false],
    [TEST_IMAGE_WITH_BASH, true],
  ] as const) {
    if ((await podman(dataDir, ['image', 'exists', tag])).code === 0) continue
    const root = await mkdtemp(join(tmpdir(), 'gpunet-rootfs-'))
    try {
      await mkdir(join(root, 'bin'))
      await mkdir(join(root, 'tmp'))
      await copyFile('/bin/busybox', join(root, 'bin/busybox'))
      await chmod(join(root, 'bin/busybox'), 0o755)
      for (const applet of APPLETS) await symlink('busybox', join(root, 'bin', applet))
      if (withBash) await writeFile(join(root, 'bin/bash'), FAKE_BASH, {mode: 0o755})
      const tarball = `${root}.tar`
      await run('tar', ['-C', root, '-cf', tarball, '.'])
      const change = ['--change', 'CMD ["/bin/echo", "image default"]', '--change', 'ENV PATH=/bin']
      // Parallel workers may build the same image at once: each imports under a name of its own and then moves the
      // shared tag onto its copy in one step, so no worker ever sees a half-made image under the tag.
      const own = `${tag.replace(/:latest$/, '')}:building-${process.pid}`
      const imported = await podman(dataDir, ['import', ...change, tarball, own])
      await rm(tarball, {force: true})
      if (imported.code !== 0) throw new Error(`podman import of ${tag} failed`)
      if ((await podman(dataDir, ['tag', own, tag])).code !== 0) throw new Error(`podman tag ${tag} failed`)
      await podman(dataDir, ['untag', own, own])
    } finally {
      await rm(root, {recursive: true, force: true})
    }
  }
}
