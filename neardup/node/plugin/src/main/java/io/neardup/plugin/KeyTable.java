package io.neardup.plugin;

/**
 * An open-addressing map from an {@code int} key to the newest value stored under it, for {@link FlagWindow}'s
 * chains: {@link #put} returns the value it replaces (the chain's next link). Keys are never removed; the owner
 * rebuilds the table from its live values when {@link #full} says so, which drops the keys whose values left.
 *
 * <p>Not thread-safe: the window calls it under its lock.
 *
 * @param <V> the stored values (never null: null marks an empty slot)
 */
final class KeyTable<V> {
    static final int MIN_CAPACITY = 1 << 10;

    private final int[] keys;
    private final Object[] values;
    private final int mask;
    private int occupied;

    /** A table with room for at least {@code expected} keys at half load. */
    KeyTable(int expected) {
        int capacity = MIN_CAPACITY;
        while (capacity < 2L * expected && capacity < (1 << 30)) {
            capacity <<= 1;
        }
        keys = new int[capacity];
        values = new Object[capacity];
        mask = capacity - 1;
    }

    private int slot(int key) {
        int h = key * 0x9E3779B9;
        int at = (h ^ (h >>> 16)) & mask;
        while (values[at] != null && keys[at] != key) {
            at = (at + 1) & mask;
        }
        return at;
    }

    /** The newest value stored under {@code key}, or null. */
    @SuppressWarnings("unchecked")
    V get(int key) {
        return (V) values[slot(key)];
    }

    /** Stores {@code value} as the newest under {@code key}; returns the one it replaces, or null. */
    @SuppressWarnings("unchecked")
    V put(int key, V value) {
        int at = slot(key);
        V before = (V) values[at];
        if (before == null) {
            keys[at] = key;
            occupied++;
        }
        values[at] = value;
        return before;
    }

    /** At half load: the owner should rebuild (probing slows beyond it, and {@link #slot} needs a free slot). */
    boolean full() {
        return occupied * 2 >= keys.length;
    }

    int occupied() {
        return occupied;
    }
}
