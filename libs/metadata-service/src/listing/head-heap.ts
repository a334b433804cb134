/**
 * The buckets of a listing merge whose next name is known, smallest name on
 * top. A page takes each name it hands out from the top, so a name costs
 * about log2(buckets) comparisons instead of one per bucket: with 64 buckets
 * a scan of every head for each of a million names was most of the listing's
 * time in the service.
 */
export class HeadHeap {
  readonly #buckets: number[] = [];
  readonly #names: string[] = [];

  get size(): number {
    return this.#buckets.length;
  }

  /** The bucket with the smallest head, or -1 when none is known. */
  topBucket(): number {
    return this.#buckets.length === 0 ? -1 : this.#buckets[0]!;
  }

  topName(): string {
    if (this.#names.length === 0) throw new Error('HeadHeap: the heap is empty');
    return this.#names[0]!;
  }

  push(bucket: number, name: string): void {
    this.#buckets.push(bucket);
    this.#names.push(name);
    this.#up(this.#buckets.length - 1);
  }

  /** The top bucket moved on to `name`, which a bucket's order puts after its old head. */
  replaceTop(name: string): void {
    if (this.#names.length === 0) throw new Error('HeadHeap: the heap is empty');
    if (name <= this.#names[0]!) throw new Error(`HeadHeap: a bucket went back from ${this.#names[0]} to ${name}`);
    this.#names[0] = name;
    this.#down(0);
  }

  popTop(): void {
    const lastBucket = this.#buckets.pop();
    const lastName = this.#names.pop();
    if (lastBucket === undefined || lastName === undefined) throw new Error('HeadHeap: the heap is empty');
    if (this.#buckets.length === 0) return;
    this.#buckets[0] = lastBucket;
    this.#names[0] = lastName;
    this.#down(0);
  }

  #up(start: number): void {
    let index = start;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (this.#names[parent]! <= this.#names[index]!) return;
      this.#swap(index, parent);
      index = parent;
    }
  }

  #down(start: number): void {
    const count = this.#names.length;
    let index = start;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= count) return;
      const right = left + 1;
      const child = right < count && this.#names[right]! < this.#names[left]! ? right : left;
      if (this.#names[index]! <= this.#names[child]!) return;
      this.#swap(index, child);
      index = child;
    }
  }

  #swap(a: number, b: number): void {
    const bucket = this.#buckets[a]!;
    this.#buckets[a] = this.#buckets[b]!;
    this.#buckets[b] = bucket;
    const name = this.#names[a]!;
    this.#names[a] = this.#names[b]!;
    this.#names[b] = name;
  }
}
