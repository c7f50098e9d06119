/**
 * Carrier: where phone numbers are bought. It answers which numbers it sells in an area (taken or not: the service
 * knows which are taken) and its offer for one number. The built-in `sim` carrier sells only numbers set aside for
 * fiction (see sim-carrier.ts).
 */

export type CarrierCapability = 'voice' | 'sms';

export interface NumberOffer {
  /** E.164. */
  number: string;
  /** ISO 3166 country code. */
  country: string;
  areaCode: string;
  capabilities: CarrierCapability[];
}

/** Why the carrier sells no numbers in an area: the field of the request at fault, and a message naming it. */
export type InventoryProblem = { problem: 'country' | 'areaCode'; message: string };

export interface Carrier {
  /** Recorded on a purchase. */
  readonly name: string;
  /** Every number the carrier could sell in the area, always in the same order, or why it sells none there. */
  inventory(country: string, areaCode: string): Promise<NumberOffer[] | InventoryProblem>;
  /** The carrier's offer for one E.164 number, or null when it does not sell that number. */
  offerFor(e164: string): Promise<NumberOffer | null>;
}
