import * as v from 'valibot';
import {
  CreateWebhookEndpointBody,
  ListEventsQuery,
  RecoverWebhookEndpointBody,
  UpdateWebhookEndpointBody,
} from '../../shared/http/schemas.js';

describe('events and webhook endpoint schemas', () => {
  it('reads the events filters into the use case’s terms', () => {
    expect(
      v.parse(ListEventsQuery, {
        type: 'sync_job.*',
        created_gte: '2026-11-01T01:00:00+01:00',
        created_lt: '2026-11-02T00:00:00Z',
        delivery_success: 'false',
      }),
    ).toEqual({
      limit: 20,
      startingAfter: undefined,
      filters: {
        type: { group: 'sync_job' },
        createdGte: '2026-11-01T00:00:00.000Z',
        createdLt: '2026-11-02T00:00:00.000Z',
        failing: true,
      },
    });
    expect(v.parse(ListEventsQuery, { type: 'order.unrouted' }).filters).toMatchObject({
      type: { exact: 'order.unrouted' },
      failing: false,
    });
  });

  it.each([
    { type: 'sync_job' },
    { type: 'nothing.*' },
    { type: '*' },
    { created_gte: '2026-11-01' },
    { created_lt: 'yesterday' },
    { delivery_success: 'true' },
    { other: '1' },
  ])('refuses the query %j', (query) => expect(v.safeParse(ListEventsQuery, query).success).toBe(false));

  it('takes ["*"] or a list of event types, a URL and a description, nothing else', () => {
    const ok = (body: unknown) => v.safeParse(CreateWebhookEndpointBody, body).success;
    expect(ok({ url: 'https://a.example/', enabledEvents: ['*'] })).toBe(true);
    expect(
      ok({ url: 'https://a.example/', enabledEvents: ['sync_job.dead', 'store.disconnected'], description: 'd' }),
    ).toBe(true);
    expect(ok({ url: 'https://a.example/', enabledEvents: ['*', 'sync_job.dead'] })).toBe(false);
    expect(ok({ url: 'https://a.example/', enabledEvents: [] })).toBe(false);
    expect(ok({ url: 'https://a.example/', enabledEvents: ['sync_job.nope'] })).toBe(false);
    expect(ok({ url: '', enabledEvents: ['*'] })).toBe(false);
    expect(ok({ url: 'https://a.example/', enabledEvents: ['*'], secret: 'whsec_x' })).toBe(false);
    expect(ok({ enabledEvents: ['*'] })).toBe(false);
  });

  it('updates any of url, enabledEvents, description (null clears it) and status', () => {
    expect(v.parse(UpdateWebhookEndpointBody, { description: null, status: 'disabled' })).toEqual({
      description: null,
      status: 'disabled',
    });
    expect(v.safeParse(UpdateWebhookEndpointBody, { status: 'paused' }).success).toBe(false);
    expect(v.safeParse(UpdateWebhookEndpointBody, { disabledReason: 'x' }).success).toBe(false);
  });

  it('reads recover’s since as an instant', () => {
    expect(v.parse(RecoverWebhookEndpointBody, { since: '2026-11-01T00:00:00-05:00' })).toEqual({
      since: '2026-11-01T05:00:00.000Z',
    });
    expect(v.safeParse(RecoverWebhookEndpointBody, {}).success).toBe(false);
  });
});
