/** A valid definition that uses every optional member, so a test can change exactly one thing. */
export function everyMemberDefinition(): Record<string, unknown> {
  return {
    $schema: './job.schema.json',
    version: '0.1',
    type: 'container',
    logistics: {
      send: {type: 'api', args: {endpoint: 'https://example.com/send'}},
      receive: {type: 'api-listen', args: {endpoint: 'https://example.com/receive'}},
    },
    meta: {trigger: 'cli', system_resources: {required_vram: 8, gpu_model: 'A100'}, anything: {else: true}},
    global: {image: 'ubuntu', gpu: false, entrypoint: ['/bin/sh'], env: {A: '1'}, work_dir: '/w'},
    ops: [
      {
        id: 'run',
        type: 'container/run',
        args: {
          image: 'docker.io/library/ubuntu:24.04',
          cmd: ['/bin/bash', '-c', 'echo hi'],
          gpu: true,
          expose: [
            {
              port: 8080,
              type: 'web',
              health_checks: [
                {type: 'http', path: '/', method: 'GET', expected_status: 200, headers: {X: 'y'}, body: {a: [1]}},
                {type: 'websocket', expected_response: 'pong'},
              ],
            },
          ],
          entrypoint: 'bash',
          env: {B: '2'},
          work_dir: '/app',
          output: '/out',
          required_vram: 4,
          resources: [
            {
              type: 'S3',
              target: '/data',
              url: 'https://s3.amazonaws.com',
              bucket: 'b',
              files: ['a.txt'],
              IAM: {ACCESS_KEY_ID: '%%secrets.K%%', REGION: 'eu', SECRET_ACCESS_KEY: '%%secrets.S%%'},
            },
            {type: 'HF', target: '/models', repo: 'org/model'},
          ],
          authentication: {docker: {username: 'u', password: '%%secrets.P%%', email: 'a@b.c', server: 'https://r.io'}},
        },
      },
      {id: 'volume', type: 'container/create-volume', args: {image: 'busybox'}},
    ],
  }
}

/** A definition of one `container/run` operation on `ubuntu` with `args` added, and `extra` top-level members. */
export function oneOpDefinition(
  args: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    version: '0.1',
    type: 'container',
    ...extra,
    ops: [{id: 'run', type: 'container/run', args: {image: 'ubuntu', ...args}}],
  }
}

/** An HTTP health check of the spec's form. */
export const HTTP_HEALTH_CHECK = {type: 'http', path: '/health', method: 'GET', expected_status: 200}
