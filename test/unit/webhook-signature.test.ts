import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { signature, signatureHeaders } from '../../shared/domain/webhook-signature.js';

const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;
const body = JSON.stringify({ object: 'event', id: 'evt_x', type: 'sync_job.completed', data: { object: {} } });
const nowSeconds = () => Math.floor(Date.now() / 1000);

describe('Standard Webhooks signer', () => {
  it('signs so that the standardwebhooks package verifies the delivery', () => {
    const secret = newSecret();
    const headers = signatureHeaders({ id: 'evt_1', timestamp: nowSeconds(), body, secrets: [secret] });
    expect(headers['webhook-id']).toBe('evt_1');
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  it('carries two signatures while two secrets sign, each verifying on its own', () => {
    const [fresh, old] = [newSecret(), newSecret()];
    const headers = signatureHeaders({ id: 'evt_2', timestamp: nowSeconds(), body, secrets: [fresh, old] });
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(() => new Webhook(fresh).verify(body, headers)).not.toThrow();
    expect(() => new Webhook(old).verify(body, headers)).not.toThrow();
    expect(() => new Webhook(newSecret()).verify(body, headers)).toThrow();
  });

  it('fails verification for another body or a stale timestamp', () => {
    const secret = newSecret();
    const headers = signatureHeaders({ id: 'evt_3', timestamp: nowSeconds(), body, secrets: [secret] });
    expect(() => new Webhook(secret).verify(`${body} `, headers)).toThrow();
    const stale = signatureHeaders({ id: 'evt_3', timestamp: nowSeconds() - 3600, body, secrets: [secret] });
    expect(() => new Webhook(secret).verify(body, stale)).toThrow();
  });

  it('signs `{id}.{timestamp}.{body}` with the bytes after whsec_ (a known vector)', () => {
    // The standard-webhooks project's own test vector (its README and libraries' tests).
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const payload = '{"test": 2432232314}';
    expect(signature(secret, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, payload)).toBe(
      'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    );
  });

  it('refuses to sign without a secret', () => {
    expect(() => signatureHeaders({ id: 'evt_4', timestamp: 1, body, secrets: [] })).toThrow();
  });
});
