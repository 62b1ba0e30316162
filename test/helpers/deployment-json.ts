/** A deployment as a manager answers it, for tests whose stand-in manager serves one. */
export const DEPLOYMENT_JSON = {
  id: 'Dep1oyment1111111111111111111111111111111111',
  name: 'svc',
  vault: 'Vau1t11111111111111111111111111111111111111',
  market: 'Market1111111111111111111111111111111111111',
  owner: 'Owner11111111111111111111111111111111111111',
  status: 'RUNNING',
  replicas: 1,
  timeout: 10,
  strategy: 'SIMPLE',
  created_at: '2026-11-27T10:00:00.000Z',
  updated_at: '2026-11-27T10:00:00.000Z',
}
