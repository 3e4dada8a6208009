package io.neardup.flag;

import java.util.Objects;

/**
 * Document order, for "the earlier document" in the preference: {@code indexed_at} (ISO-8601 with nine fraction
 * digits, all of one length, so text order is time order), then the id ({@code Stored.order}). Strings compare by
 * code point as Python's do; Java's {@code String.compareTo} compares UTF-16 units, which orders characters beyond
 * U+FFFF before U+E000..U+FFFF and would pick a different "earlier" document for such ids.
 */
public record OrderKey(String indexedAt, String id) implements Comparable<OrderKey> {
    public OrderKey {
        Objects.requireNonNull(indexedAt, "indexedAt");
        Objects.requireNonNull(id, "id");
    }

    @Override
    public int compareTo(OrderKey other) {
        int byTime = compareCodePoints(indexedAt, other.indexedAt);
        return byTime != 0 ? byTime : compareCodePoints(id, other.id);
    }

    /** Python's {@code str} order: lexicographic by code point. */
    static int compareCodePoints(String a, String b) {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
            int x = a.codePointAt(i);
            int y = b.codePointAt(j);
            if (x != y) {
                return Integer.compare(x, y);
            }
            i += Character.charCount(x);
            j += Character.charCount(y);
        }
        return Boolean.compare(i < a.length(), j < b.length());
    }
}
