import { applyShipment, fulfillmentStatusOf, planShipment, type ShipmentLine } from '../../shared/domain/shipping.js';

const line = (reseller: string | null, source: string | null, quantity: number, fulfilled = 0): ShipmentLine => ({
  resellerLineItemId: reseller,
  sourceLineItemId: source,
  quantity,
  fulfilledQuantity: fulfilled,
});

describe('planShipment (CONTRACT.md §10.2)', () => {
  const lines = [line('r1', 's1', 3), line('r2', 's2', 1)];

  it('ships exactly the named lines of the job, in reseller ids', () => {
    expect(planShipment(lines, [{ id: 's1', quantity: 2 }])).toEqual({
      kind: 'lines',
      lines: [{ resellerLineItemId: 'r1', quantity: 2 }],
    });
  });

  it('cuts a quantity to what remains unfulfilled', () => {
    expect(planShipment([line('r1', 's1', 3, 2)], [{ id: 's1', quantity: 5 }])).toEqual({
      kind: 'lines',
      lines: [{ resellerLineItemId: 'r1', quantity: 1 }],
    });
  });

  it('leaves out ids that are not the job’s (another supplier’s line)', () => {
    expect(
      planShipment(lines, [
        { id: 'other', quantity: 1 },
        { id: 's2', quantity: 1 },
      ]),
    ).toEqual({ kind: 'lines', lines: [{ resellerLineItemId: 'r2', quantity: 1 }] });
  });

  it('covers every line not yet fulfilled when the parcel names none', () => {
    expect(planShipment([line('r1', 's1', 3, 1), line('r2', 's2', 1, 1)], null)).toEqual({
      kind: 'lines',
      lines: [{ resellerLineItemId: 'r1', quantity: 2 }],
    });
  });

  it('ignores, with its reason, a parcel with nothing left to ship', () => {
    expect(planShipment([line('r1', 's1', 1, 1)], [{ id: 's1', quantity: 1 }])).toEqual({
      kind: 'ignored',
      reason: 'every item it names is already fulfilled',
    });
    expect(planShipment([line('r1', 's1', 1, 1)], null)).toEqual({
      kind: 'ignored',
      reason: 'every item of the job is already fulfilled',
    });
    expect(planShipment(lines, [{ id: 'other', quantity: 1 }])).toEqual({
      kind: 'ignored',
      reason: 'the fulfillment names no line item of this job',
    });
  });

  it('fulfills without line items a job whose lines have no reseller ids, as before', () => {
    expect(planShipment([line(null, 's1', 2)], [{ id: 's1', quantity: 1 }])).toEqual({ kind: 'whole' });
    expect(planShipment([], null)).toEqual({ kind: 'whole' });
  });
});

describe('fulfillmentStatusOf and applyShipment', () => {
  it('moves a job from unfulfilled through partial to fulfilled, and back when a parcel is cancelled', () => {
    // Arrange
    let lines = [line('r1', 's1', 2), line('r2', 's2', 1)];
    expect(fulfillmentStatusOf(lines)).toBe('unfulfilled');

    // Act / Assess
    lines = applyShipment(lines, [{ resellerLineItemId: 'r1', quantity: 1 }], 1);
    expect(fulfillmentStatusOf(lines)).toBe('partial');
    lines = applyShipment(
      lines,
      [
        { resellerLineItemId: 'r1', quantity: 5 },
        { resellerLineItemId: 'r2', quantity: 1 },
      ],
      1,
    );
    expect(lines.map((l) => l.fulfilledQuantity)).toEqual([2, 1]);
    expect(fulfillmentStatusOf(lines)).toBe('fulfilled');
    lines = applyShipment(lines, [{ resellerLineItemId: 'r2', quantity: 1 }], -1);
    expect(fulfillmentStatusOf(lines)).toBe('partial');
    lines = applyShipment(lines, 'whole', -1);
    expect(fulfillmentStatusOf(lines)).toBe('unfulfilled');
  });
});
