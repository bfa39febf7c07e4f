/**
 * Which of a sync job's lines a supplier's parcel ships, in the reseller's terms (CONTRACT.md §10.2).
 * Pure: the fulfillment worker applies it to the job's lines as they stand when it delivers.
 */

/** One reseller line item a job carries, with what the reseller's platform has accepted as shipped. */
export interface ShipmentLine {
  resellerLineItemId: string | null;
  sourceLineItemId: string | null;
  quantity: number;
  fulfilledQuantity: number;
}

/** A line a source fulfillment names: the supplier's line item id and how many it ships. */
export interface ShippedLine {
  id: string;
  quantity: number;
}

export type ShipmentPlan =
  /** Ship exactly these reseller line items and quantities. */
  | { kind: 'lines'; lines: Array<{ resellerLineItemId: string; quantity: number }> }
  /** The job's lines have no reseller ids (an order without line item ids): fulfilled without line items. */
  | { kind: 'whole' }
  /** Nothing is left to ship: nothing is sent, and the fulfillment records why. */
  | { kind: 'ignored'; reason: string };

const remaining = (line: ShipmentLine) => Math.max(0, line.quantity - line.fulfilledQuantity);

/**
 * The reseller fulfillment a parcel becomes. `shipped` null: the parcel names no lines, so it covers
 * every line of the job not yet fulfilled. Otherwise only the job's lines it names, quantities cut to
 * what remains; ids that are not the job's are left out. Never a line of another job.
 */
export const planShipment = (lines: ShipmentLine[], shipped: ShippedLine[] | null): ShipmentPlan => {
  if (lines.length === 0 || lines.some((line) => line.resellerLineItemId === null)) {
    return lines.every((line) => remaining(line) === 0) && lines.length > 0
      ? { kind: 'ignored', reason: 'every item of the job is already fulfilled' }
      : { kind: 'whole' };
  }
  const wanted = new Map<string, number>();
  if (shipped === null) {
    for (const line of lines) wanted.set(line.resellerLineItemId!, remaining(line));
  } else {
    const bySourceId = new Map<string, ShipmentLine>();
    for (const line of lines) if (line.sourceLineItemId !== null) bySourceId.set(line.sourceLineItemId, line);
    for (const item of shipped) {
      const line = bySourceId.get(item.id);
      if (!line) continue;
      const id = line.resellerLineItemId!;
      wanted.set(id, Math.min(remaining(line), (wanted.get(id) ?? 0) + item.quantity));
    }
  }
  const planned = [...wanted]
    .filter(([, quantity]) => quantity > 0)
    .map(([resellerLineItemId, quantity]) => ({ resellerLineItemId, quantity }));
  if (planned.length > 0) return { kind: 'lines', lines: planned };
  if (shipped === null) return { kind: 'ignored', reason: 'every item of the job is already fulfilled' };
  if (wanted.size === 0) return { kind: 'ignored', reason: 'the fulfillment names no line item of this job' };
  return { kind: 'ignored', reason: 'every item it names is already fulfilled' };
};

export type FulfillmentStatus = 'unfulfilled' | 'partial' | 'fulfilled';

/** The job's `fulfillmentStatus`, from its lines' quantities the reseller's platform accepted. */
export const fulfillmentStatusOf = (
  lines: Pick<ShipmentLine, 'quantity' | 'fulfilledQuantity'>[],
): FulfillmentStatus => {
  const shipped = lines.reduce((sum, line) => sum + Math.min(line.fulfilledQuantity, line.quantity), 0);
  const total = lines.reduce((sum, line) => sum + line.quantity, 0);
  if (shipped === 0) return 'unfulfilled';
  return shipped >= total ? 'fulfilled' : 'partial';
};

/** The job's lines after the reseller's platform accepted (`sign` 1) or cancelled (`-1`) a fulfillment's lines. */
export const applyShipment = <T extends ShipmentLine>(
  lines: T[],
  shippedLines: Array<{ resellerLineItemId: string; quantity: number }> | 'whole',
  sign: 1 | -1,
): T[] => {
  if (shippedLines === 'whole') {
    return lines.map((line) => ({ ...line, fulfilledQuantity: sign === 1 ? line.quantity : 0 }));
  }
  const byId = new Map(shippedLines.map((line) => [line.resellerLineItemId, line.quantity]));
  return lines.map((line) => {
    const quantity = line.resellerLineItemId === null ? undefined : byId.get(line.resellerLineItemId);
    if (quantity === undefined) return line;
    const fulfilledQuantity = Math.min(line.quantity, Math.max(0, line.fulfilledQuantity + sign * quantity));
    return { ...line, fulfilledQuantity };
  });
};

/** What a parcel covers of its job: the reseller lines it ships, or the whole job. */
export type ParcelCover = ReadonlyArray<{ id: string; quantity: number }> | 'whole';

/**
 * How much of each of a job's lines the parcels cover together, never more than the line's
 * quantity: what the reseller's platform accepted (`fulfilledQuantity`, from the delivered parcels)
 * or what is spoken for (the parcels on their way too, when a new parcel is planned).
 */
export const coveredQuantities = (
  lines: ReadonlyArray<{ resellerLineItemId: string | null; quantity: number }>,
  parcels: ReadonlyArray<ParcelCover>,
): number[] =>
  lines.map((line) => {
    let covered = 0;
    for (const parcel of parcels) covered = parcel === 'whole' ? line.quantity : covered + shippedOf(parcel, line);
    return Math.min(line.quantity, covered);
  });

/** What one parcel's items ship of one line. */
const shippedOf = (items: Exclude<ParcelCover, 'whole'>, line: { resellerLineItemId: string | null }): number =>
  items.reduce((sum, item) => (item.id === line.resellerLineItemId ? sum + item.quantity : sum), 0);

// ---------- carrier progress (CONTRACT.md §16.2)

/** A parcel's `shipmentStatus` as the API shows it: the supplier's platform's last word on the carrier. */
export const SHIPMENT_STATUSES = [
  'label_purchased',
  'label_printed',
  'confirmed',
  'failure',
  'in_transit',
  'out_for_delivery',
  'attempted_delivery',
  'ready_for_pickup',
  'delivered',
] as const;
export type ShipmentStatus = (typeof SHIPMENT_STATUSES)[number];

/**
 * How far along each status is: a status never moves back (a late `in_transit` after `delivered`
 * changes nothing). From rank 2 on, the carrier has the parcel: a scan. `failure` is no scan.
 */
const RANKS: Record<ShipmentStatus, number> = {
  label_purchased: 0,
  label_printed: 0,
  confirmed: 1,
  failure: 1,
  in_transit: 2,
  out_for_delivery: 3,
  attempted_delivery: 3,
  ready_for_pickup: 3,
  delivered: 4,
};
const SCAN_RANK = 2;

/**
 * A status as a platform spells it (REST `shipment_status`, a fulfillment event's `status`, upper or
 * lower case), in the service's terms; null for a value it does not know (the set grows between API
 * versions: never an error). Event statuses with no REST twin take the nearest one.
 */
export const shipmentStatusOf = (raw: unknown): ShipmentStatus | null => {
  if (typeof raw !== 'string') return null;
  const status = raw.toLowerCase();
  if (status === 'carrier_picked_up' || status === 'delayed') return 'in_transit';
  if (status === 'picked_up') return 'delivered';
  return (SHIPMENT_STATUSES as readonly string[]).includes(status) ? (status as ShipmentStatus) : null;
};

export const isScan = (status: ShipmentStatus) => RANKS[status] >= SCAN_RANK;

/** What a parcel knows of its carrier: its last status and the carrier's time of its first scan. */
export interface CarrierProgress {
  shipmentStatus?: ShipmentStatus;
  firstScanAt?: string;
}

/** One report of a status (`at`: the carrier's time, else the report's). */
export interface CarrierReport {
  status: ShipmentStatus;
  at: string | null;
}

/**
 * The parcel's progress after a report: the status unless it would move back, and the first scan's
 * time (the earliest scan reported, whatever order the reports come in). Undefined: nothing changes.
 */
export const progressAfter = (current: CarrierProgress, report: CarrierReport): CarrierProgress | undefined => {
  const next: CarrierProgress = { ...current };
  if (!current.shipmentStatus || RANKS[report.status] >= RANKS[current.shipmentStatus]) {
    next.shipmentStatus = report.status;
  }
  if (isScan(report.status) && report.at && (!current.firstScanAt || report.at < current.firstScanAt)) {
    next.firstScanAt = report.at;
  }
  return next.shipmentStatus === current.shipmentStatus && next.firstScanAt === current.firstScanAt ? undefined : next;
};
