import { startService, createResellerStore, type TestService } from './support.js';
jest.setTimeout(30000);
let svc: TestService;
beforeAll(async () => { svc = await startService(); }, 60000);
afterAll(() => svc?.stop());
it('probe', async () => {
  const r = await createResellerStore(svc.api('owner_a'));
  console.log(r);
  const l = await svc.api('owner_a').get('/v1/reseller_stores');
  console.log(l.status, l.headers.get('request-id'), l.text);
});
