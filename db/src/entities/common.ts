/** Current unix time in whole seconds (the seeds' wire format for created_time, expired_time, ...). */
export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
