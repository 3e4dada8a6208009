package io.neardup.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

final class IndexedAtTest {
    @Test
    void formatsAsPythonsSchemaTimestamp() {
        // mappings/schema.py: timestamp(1_700_000_000_123_456_789) == '2023-11-14T22:13:20.123456789Z'
        assertEquals("2023-11-14T22:13:20.123456789Z", IndexedAt.format(1_700_000_000_123_456_789L));
        assertEquals("1970-01-01T00:00:00.000000000Z", IndexedAt.format(0));
    }

    @Test
    void docValuesWithoutTrailingZerosReadBackInFull() {
        // Elasticsearch renders date_nanos doc values without the fraction's trailing zeros
        assertEquals("2026-11-26T15:10:00.123456780Z", IndexedAt.canonical("2026-11-26T15:10:00.12345678Z"));
        assertEquals("2026-11-26T15:10:00.100000000Z", IndexedAt.canonical("2026-11-26T15:10:00.100Z"));
        assertEquals("2026-11-26T15:10:00.123456789Z", IndexedAt.canonical("2026-11-26T15:10:00.123456789Z"));
        assertEquals("not a time", IndexedAt.canonical("not a time"));
        // text order is time order again: 0.12345678 s is before 0.123456789 s
        assertEquals(true, IndexedAt.canonical("2026-11-26T15:10:00.12345678Z").compareTo("2026-11-26T15:10:00.123456789Z") < 0);
    }

    @Test
    void timesAreStrictlyIncreasingWhenTheClockStandsStill() {
        IndexedAt clock = new IndexedAt(() -> 5_000_000_000L);
        assertEquals("1970-01-01T00:00:05.000000000Z", clock.next());
        assertEquals("1970-01-01T00:00:05.000000001Z", clock.next());
        assertEquals("1970-01-01T00:00:05.000000002Z", clock.next());
    }
}
