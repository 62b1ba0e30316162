import {strict as assert} from 'node:assert'
import {existsSync} from 'node:fs'
import {readFile} from 'node:fs/promises'
import {createServer, type IncomingMessage, type Server, type ServerResponse} from 'node:http'
import type {AddressInfo} from 'node:net'
import {join} from 'node:path'

import type {Resource} from '../../../src/lib/definition/schema.js'
import {isGpunetError} from '../../../src/lib/errors.js'
import {configureHttp} from '../../../src/lib/http/client.js'
import {type OperationPlan, planOperations} from '../../../src/lib/node/operation-plan.js'
import {confinedPath, loadResources, parseListObjectsV2, signV4} from '../../../src/lib/node/resources.js'
import {PodmanRuntime} from '../../../src/lib/node/runtime/podman.js'
import {startProxy, startServer, type TestServer, withProxyVariables} from '../../helpers/http.js'
import {startUnacceptingPort} from '../../helpers/unaccepting-port.js'
import {requirePodman, TEST_IMAGE} from '../../helpers/podman.js'

const IAM = {ACCESS_KEY_ID: 'AKIDEXAMPLE', REGION: 'eu-west-1', SECRET_ACCESS_KEY: 'never-in-a-message-42'}

/** The form of a SigV4 Authorization header for S3, with the access key and region of `IAM`. */
const SIGV4 =
  /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/s3\/aws4_request, SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=[0-9a-f]{64}$/

interface Seen {
  url: string
  authorization?: string
  amzDate?: string
}

/** An HTTP server on 127.0.0.1, port 0, answering with `handle`; records every request. */
async function serve(handle: (req: IncomingMessage) => {status: number; body: string; type?: string}) {
  const seen: Seen[] = []
  const server: Server = createServer((req, res) => {
    seen.push({
      url: req.url ?? '',
      authorization: req.headers.authorization,
      amzDate: req.headers['x-amz-date'] as string | undefined,
    })
    const answer = handle(req)
    res.writeHead(answer.status, {'content-type': answer.type ?? 'application/octet-stream'}).end(answer.body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {url, seen, close: () => new Promise<void>((resolve) => server.close(() => resolve()))}
}

/** An S3-compatible endpoint holding `objects` in bucket `data`; it refuses unsigned requests when `signed`. */
function s3(objects: Record<string, string>, signed: boolean) {
  return serve((req) => {
    const url = new URL(req.url ?? '/', 'http://x')
    if (signed && !SIGV4.test(req.headers.authorization ?? ''))
      return {status: 403, body: '<Error>AccessDenied</Error>'}
    if (url.pathname === '/data' && url.searchParams.get('list-type') === '2') {
      // Two pages, so the continuation token is followed.
      const keys = Object.keys(objects)
      const second = url.searchParams.get('continuation-token') === 'page&2'
      const page = second ? keys.slice(1) : keys.slice(0, 1)
      const more = second
        ? ''
        : '<IsTruncated>true</IsTruncated><NextContinuationToken>page&amp;2</NextContinuationToken>'
      const contents = page.map((k) => `<Contents><Key>${k.replace(/&/g, '&amp;')}</Key></Contents>`).join('')
      return {status: 200, type: 'application/xml', body: `<ListBucketResult>${more}${contents}</ListBucketResult>`}
    }
    const key = decodeURIComponent(url.pathname.replace(/^\/data\//, ''))
    return key in objects ? {status: 200, body: objects[key]!} : {status: 404, body: '<Error>NoSuchKey</Error>'}
  })
}

async function failure(promise: Promise<unknown>): Promise<Error & {code: string}> {
  try {
    await promise
  } catch (error) {
    assert.ok(isGpunetError(error), String(error))
    return error as Error & {code: string}
  }
  assert.fail('expected a failure')
}

describe('resources', () => {
  it('downloads named S3 objects with a well-formed SigV4 signature into the resource folder', async () => {
    const server = await s3({'a.txt': 'alpha', 'dir/b & c.txt': 'beta'}, true)
    const resource: Resource = {
      type: 'S3',
      target: '/data',
      url: server.url,
      bucket: 'data',
      files: ['a.txt', 'dir/b & c.txt'],
      IAM,
    }
    const loaded = await loadResources([resource])
    try {
      const [mount] = loaded.mounts
      assert.equal(mount?.target, '/data')
      assert.equal(await readFile(join(mount.source, 'a.txt'), 'utf8'), 'alpha')
      assert.equal(await readFile(join(mount.source, 'dir/b & c.txt'), 'utf8'), 'beta')
      assert.deepEqual(
        server.seen.map((s) => s.url),
        ['/data/a.txt', '/data/dir/b%20%26%20c.txt'],
      )
      for (const s of server.seen) {
        assert.match(s.authorization ?? '', SIGV4)
        assert.match(s.amzDate ?? '', /^\d{8}T\d{6}Z$/)
      }
    } finally {
      await loaded.cleanup()
      await server.close()
    }
    assert.equal(existsSync(loaded.mounts[0]!.source), false, 'cleanup removes the downloads')
  })

  it('lists a bucket with ListObjectsV2 (following the continuation token) when files are not named', async () => {
    const server = await s3({'one.bin': '1', 'sub/two&.bin': '22'}, true)
    const loaded = await loadResources([{type: 'S3', target: '/in', url: server.url, bucket: 'data', IAM}])
    try {
      const source = loaded.mounts[0]!.source
      assert.equal(await readFile(join(source, 'one.bin'), 'utf8'), '1')
      assert.equal(await readFile(join(source, 'sub/two&.bin'), 'utf8'), '22')
      assert.equal(server.seen[1]!.url, '/data?list-type=2&continuation-token=page%262')
    } finally {
      await loaded.cleanup()
      await server.close()
    }
  })

  it('fails with resource_failed naming the resource and HTTP status, never the secret key', async () => {
    const server = await s3({'a.txt': 'alpha'}, true)
    try {
      const unsigned = await failure(
        loadResources([{type: 'S3', target: '/data', url: server.url, bucket: 'data', files: ['a.txt']}]),
      )
      assert.equal(unsigned.code, 'resource_failed')
      assert.match(unsigned.message, /S3 resource for \/data: a\.txt: 127\.0\.0\.1:\d+ answered HTTP 403/)
      const missing = await failure(
        loadResources([{type: 'S3', target: '/data', url: server.url, bucket: 'data', files: ['nope'], IAM}]),
      )
      assert.match(missing.message, /nope: .* answered HTTP 404/)
      assert.ok(!missing.message.includes(IAM.SECRET_ACCESS_KEY))
      assert.ok(!JSON.stringify(missing).includes(IAM.SECRET_ACCESS_KEY))
    } finally {
      await server.close()
    }
  })

  it('downloads Hugging Face files with the operation HF_TOKEN, listing the repository when needed', async () => {
    const files: Record<string, string> = {'config.json': '{"a":1}', 'weights/model.bin': 'bytes'}
    const server = await serve((req) => {
      if (req.headers.authorization !== 'Bearer hf-token') return {status: 401, body: ''}
      if (req.url === '/api/models/org/model') {
        const siblings = Object.keys(files).map((rfilename) => ({rfilename}))
        return {status: 200, type: 'application/json', body: JSON.stringify({siblings})}
      }
      const file = req.url?.replace(/^\/org\/model\/resolve\/main\//, '') ?? ''
      return file in files ? {status: 200, body: files[file]!} : {status: 404, body: ''}
    })
    const options = {hfEndpoint: server.url, env: {HF_TOKEN: 'hf-token'}}
    const loaded = await loadResources([{type: 'HF', target: '/models', repo: 'org/model'}], options)
    try {
      const source = loaded.mounts[0]!.source
      assert.equal(await readFile(join(source, 'weights/model.bin'), 'utf8'), 'bytes')
      assert.equal(await readFile(join(source, 'config.json'), 'utf8'), '{"a":1}')
      assert.deepEqual(
        server.seen.map((s) => s.url),
        ['/api/models/org/model', '/org/model/resolve/main/config.json', '/org/model/resolve/main/weights/model.bin'],
      )
      const noToken = await failure(
        loadResources([{type: 'HF', target: '/m', repo: 'org/model', files: ['x']}], {hfEndpoint: server.url}),
      )
      assert.match(noToken.message, /answered HTTP 401/)
    } finally {
      await loaded.cleanup()
      await server.close()
    }
  })

  it('refuses file names that leave the resource folder, from the definition or from a listing', async () => {
    for (const name of ['../escape', '/etc/passwd', 'a/../../b', 'a\\b', '']) {
      assert.throws(() => confinedPath('/tmp/res', name), /would leave the resource folder/, name)
    }
    assert.equal(confinedPath('/tmp/res', './a//b'), '/tmp/res/a/b')
    const server = await s3({'../../outside': 'x'}, false)
    try {
      const error = await failure(loadResources([{type: 'S3', target: '/d', url: server.url, bucket: 'data'}]))
      assert.match(error.message, /"\.\.\/\.\.\/outside" would leave the resource folder/)
    } finally {
      await server.close()
    }
  })

  it('stops a download over the size cap and refuses targets that cannot be mount points', async () => {
    const server = await s3({big: 'x'.repeat(1000)}, false)
    try {
      const s3big: Resource = {type: 'S3', target: '/d', url: server.url, bucket: 'data', files: ['big']}
      const error = await failure(loadResources([s3big], {maxBytes: 999}))
      assert.match(error.message, /over its size cap/)
      const loaded = await loadResources([s3big], {maxBytes: 1000})
      await loaded.cleanup()
      const relative = await failure(loadResources([{...s3big, target: 'data'}]))
      assert.match(relative.message, /must be an absolute path/)
    } finally {
      await server.close()
    }
  })

  it('gives up on a silent endpoint at its timeout, or when the job ends', async () => {
    const held: ServerResponse[] = []
    const server = createServer((_req, res) => held.push(res))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    const resource: Resource = {type: 'S3', target: '/d', url, bucket: 'data', files: ['slow']}
    try {
      const late = await failure(loadResources([resource], {timeoutMs: 200}))
      assert.match(late.message, /the request to 127\.0\.0\.1:\d+ failed \(timed out\)/)
      const job = new AbortController()
      setTimeout(() => job.abort(), 100)
      const ended = await failure(loadResources([resource], {signal: job.signal}))
      assert.match(ended.message, /failed \(stopped: the job ended\)/)
    } finally {
      for (const res of held) res.destroy()
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it('parses ListObjectsV2 keys and entities without expanding anything else', () => {
    const xml =
      '<?xml version="1.0"?><ListBucketResult><IsTruncated>false</IsTruncated>' +
      '<Contents><Key>a&lt;b&#x41;&#66;&unknown;</Key></Contents><Contents><Key>d/</Key></Contents></ListBucketResult>'
    assert.deepEqual(parseListObjectsV2(xml), {keys: ['a<bAB&unknown;', 'd/']})
  })

  it('signs as the "GET Bucket (List Objects)" example of the S3 SigV4 documentation', () => {
    const headers = signV4(
      new URL('https://examplebucket.s3.amazonaws.com/?max-keys=2&prefix=J'),
      {
        accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
        secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
        region: 'us-east-1',
      },
      new Date('2013-05-24T00:00:00Z'),
    )
    assert.deepEqual(headers, {
      'x-amz-content-sha256': 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
      'x-amz-date': '20130524T000000Z',
      authorization:
        'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, ' +
        'SignedHeaders=host;x-amz-content-sha256;x-amz-date, ' +
        'Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7',
    })
  })
})

describe('resources over the shared HTTP client', () => {
  const servers: TestServer[] = []
  beforeEach(() => configureHttp({retry: {minDelayMs: 50}}))
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()))
    await configureHttp()
  })
  const hfFile = (hfEndpoint: string) =>
    loadResources([{type: 'HF', target: '/m', repo: 'org/model', files: ['w.bin']}], {hfEndpoint})

  it('downloads again after a 503 and after a 429 with Retry-After', async () => {
    const times: number[] = []
    const server = await startServer((_req, res) => {
      times.push(Date.now())
      if (times.length === 1) res.writeHead(503).end()
      else if (times.length === 2) res.writeHead(429, {'retry-after': '1'}).end()
      else res.end('weights')
    })
    servers.push(server)
    const loaded = await hfFile(server.url)
    try {
      assert.equal(await readFile(join(loaded.mounts[0]!.source, 'w.bin'), 'utf8'), 'weights')
      assert.equal(server.seen.length, 3)
      assert.ok(times[2]! - times[1]! >= 950, `waited ${times[2]! - times[1]!} ms after Retry-After: 1`)
    } finally {
      await loaded.cleanup()
    }
  })

  it('fails naming the headers timeout of an endpoint that never answers', async () => {
    await configureHttp({timeouts: {headersMs: 300}})
    const server = await startServer(() => {})
    servers.push(server)
    const error = await failure(hfFile(server.url))
    assert.match(error.message, /the request to 127\.0\.0\.1:\d+ failed \(no answer within 300 ms\)/)
  })

  it('fails naming the connect timeout of an endpoint that never accepts', async () => {
    await configureHttp({timeouts: {connectMs: 300}})
    const port = await startUnacceptingPort()
    try {
      const error = await failure(hfFile(`http://127.0.0.1:${port.port}`))
      assert.match(error.message, /failed \(no connection within 300 ms\)/)
    } finally {
      port.close()
    }
  })

  it('downloads from a remote endpoint through HTTP_PROXY, and directly when NO_PROXY names it', async () => {
    const proxy = await startProxy((_req, res) => res.end('proxied weights'))
    servers.push(proxy)
    await withProxyVariables({HTTP_PROXY: proxy.url}, async () => {
      const loaded = await hfFile('http://hf.gpunet-test.invalid')
      assert.equal(await readFile(join(loaded.mounts[0]!.source, 'w.bin'), 'utf8'), 'proxied weights')
      await loaded.cleanup()
    })
    assert.deepEqual(proxy.seen, ['GET http://hf.gpunet-test.invalid/org/model/resolve/main/w.bin'])
    await configureHttp({retry: {maxRetries: 0}})
    await withProxyVariables({HTTP_PROXY: proxy.url, NO_PROXY: 'hf.gpunet-test.invalid'}, async () => {
      const error = await failure(hfFile('http://hf.gpunet-test.invalid'))
      assert.match(error.message, /failed \((ENOTFOUND|EAI_AGAIN)\)/)
    })
    assert.equal(proxy.seen.length, 1)
  })
})

describe('resources in a podman container', function () {
  this.timeout(120_000)
  const pod = requirePodman()

  it('mounts a downloaded resource read-only at its target, where the operation reads it', async () => {
    const server = await s3({'greeting.txt': 'hello from s3\n'}, true)
    const resource: Resource = {
      type: 'S3',
      target: '/mnt/data',
      url: server.url,
      bucket: 'data',
      files: ['greeting.txt'],
      IAM,
    }
    const [plan] = planOperations({
      version: '0.1',
      type: 'container',
      ops: [
        {
          id: 'reader',
          type: 'container/run',
          args: {image: TEST_IMAGE, cmd: 'cat /mnt/data/greeting.txt; echo x > /mnt/data/new || echo read-only'},
        },
      ],
    }) as [OperationPlan]
    const loaded = await loadResources([resource])
    try {
      const runtime = new PodmanRuntime({dataDir: pod.dataDir(), pull: 'never'})
      const result = await runtime.run(plan, {jobId: `res-${process.pid}`, mounts: loaded.mounts})
      assert.equal(result.exitCode, 0, result.stderr)
      assert.match(result.stdout, /^hello from s3\nread-only\n$/)
    } finally {
      await loaded.cleanup()
      await server.close()
    }
  })
})
