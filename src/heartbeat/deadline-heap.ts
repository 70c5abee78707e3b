/**
 * A binary min-heap ordered by `dueAt` whose entries remember their own
 * position, so that removing or rescheduling any entry costs O(log n)
 * instead of a scan of every held lock.
 */
export interface HeapEntry {
  dueAt: number;
  /** Position in the heap; -1 when not in it. Maintained by the heap only. */
  heapIndex: number;
}

export class DeadlineHeap<T extends HeapEntry> {
  readonly #items: T[] = [];

  get size(): number {
    return this.#items.length;
  }

  peek(): T | undefined {
    return this.#items[0];
  }

  /**
   * How many entries are due before `time`, counting no further than
   * `atMost`. Only due entries and their children are visited, so the cost
   * follows `atMost`, not the size of the heap.
   */
  countDueBefore(time: number, atMost: number): number {
    const items = this.#items;
    const pending = [0];
    let count = 0;
    for (let index = pending.pop(); index !== undefined && count < atMost; index = pending.pop()) {
      const entry = items[index];
      if (entry === undefined || entry.dueAt >= time) continue;
      count++;
      pending.push(2 * index + 1, 2 * index + 2);
    }
    return count;
  }

  has(entry: T): boolean {
    return entry.heapIndex >= 0 && this.#items[entry.heapIndex] === entry;
  }

  /** Adds the entry, or moves it if it is already in the heap. */
  upsert(entry: T, dueAt: number): void {
    if (this.has(entry)) {
      const earlier = dueAt < entry.dueAt;
      entry.dueAt = dueAt;
      if (earlier) this.#siftUp(entry.heapIndex);
      else this.#siftDown(entry.heapIndex);
      return;
    }
    entry.dueAt = dueAt;
    entry.heapIndex = this.#items.length;
    this.#items.push(entry);
    this.#siftUp(entry.heapIndex);
  }

  pop(): T | undefined {
    const top = this.#items[0];
    if (top !== undefined) this.remove(top);
    return top;
  }

  remove(entry: T): void {
    if (!this.has(entry)) return;
    const index = entry.heapIndex;
    const last = this.#items.pop() as T;
    entry.heapIndex = -1;
    if (last === entry) return;
    this.#items[index] = last;
    last.heapIndex = index;
    this.#siftUp(index);
    this.#siftDown(last.heapIndex);
  }

  clear(): void {
    for (const entry of this.#items) entry.heapIndex = -1;
    this.#items.length = 0;
  }

  #swap(a: number, b: number): void {
    const items = this.#items;
    const x = items[a] as T;
    const y = items[b] as T;
    items[a] = y;
    items[b] = x;
    x.heapIndex = b;
    y.heapIndex = a;
  }

  #siftUp(index: number): void {
    const items = this.#items;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if ((items[parent] as T).dueAt <= (items[index] as T).dueAt) return;
      this.#swap(index, parent);
      index = parent;
    }
  }

  #siftDown(index: number): void {
    const items = this.#items;
    for (;;) {
      const left = 2 * index + 1;
      const right = left + 1;
      let smallest = index;
      if (left < items.length && (items[left] as T).dueAt < (items[smallest] as T).dueAt) smallest = left;
      if (right < items.length && (items[right] as T).dueAt < (items[smallest] as T).dueAt) smallest = right;
      if (smallest === index) return;
      this.#swap(index, smallest);
      index = smallest;
    }
  }
}
