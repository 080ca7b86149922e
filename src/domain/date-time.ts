// Date-times as the CRDs write them (RFC 3339, `format: date-time`), read as the apiserver reads them.

const DATE_TIME = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(\.\d+)?(Z|[+-](\d\d):(\d\d))$/i;

/**
 * The milliseconds of an RFC 3339 date-time (`format: date-time`), or null. Date.parse alone
 * would take February 30 as March 2 and 24:00 as the next day; the apiserver refuses both.
 */
export function parseDateTime(text: string): number | null {
  const match = DATE_TIME.exec(text);
  if (!match) return null;
  const [year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, offsetHours = 0, offsetMinutes = 0] = [
    1, 2, 3, 4, 5, 6, 9, 10,
  ].map((group) => Number(match[group] ?? 0));
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const daysInMonth = month === 2 ? (leap ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth) return null;
  if (hour > 23 || minute > 59 || second > 59 || offsetHours > 23 || offsetMinutes > 59) return null;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? null : ms;
}
