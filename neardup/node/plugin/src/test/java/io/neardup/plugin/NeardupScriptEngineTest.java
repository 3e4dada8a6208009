package io.neardup.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.util.List;
import java.util.Map;

import org.elasticsearch.index.mapper.BinaryFieldMapper;
import org.elasticsearch.index.mapper.KeywordFieldMapper;
import org.elasticsearch.index.mapper.MappedFieldType;
import org.elasticsearch.index.mapper.NumberFieldMapper;
import org.elasticsearch.search.lookup.SearchLookup;
import org.junit.jupiter.api.Test;

final class NeardupScriptEngineTest {
    /** A parameter of the wrong type is the caller's error (an IllegalArgumentException: 400), never a ClassCastException (500). */
    @Test
    void wrongParameterTypesAreRefusedNamingTheParameter() {
        var factory = NeardupScriptEngine.hammingFactory();
        IllegalArgumentException field = assertThrows(IllegalArgumentException.class,
            () -> factory.newFactory(Map.of("field", 5, "fingerprints", List.of(1L)), null));
        assertEquals("hamming: param [field] must be a string, not Integer", field.getMessage());
        IllegalArgumentException distance = assertThrows(IllegalArgumentException.class,
            () -> factory.newFactory(Map.of("field", "f", "fingerprints", List.of(1L), "max_distance", "3"), null));
        assertEquals("hamming: param [max_distance] must be a number, not String", distance.getMessage());
        IllegalArgumentException values = assertThrows(IllegalArgumentException.class,
            () -> factory.newFactory(Map.of("field", "f", "fingerprints", List.of(1L, "2")), null));
        assertEquals("hamming: param [fingerprints]: a list of whole numbers was expected, and item 1 is String", values.getMessage());
    }

    @Test
    void givenParametersAreTaken() {
        var factory = NeardupScriptEngine.hammingFactory();
        factory.newFactory(Map.of("field", "f", "fingerprints", List.of(1L, 2), "max_distance", 5), null);
    }

    /** max_distance counts bits of a 64-bit fingerprint: 0 to 64, a whole number; fingerprints whole 64-bit values. */
    @Test
    void outOfRangeHammingParametersAreRefused() {
        var factory = NeardupScriptEngine.hammingFactory();
        for (Object distance : List.of(65, -1, 2.5)) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> factory.newFactory(Map.of("field", "f", "fingerprints", List.of(1L), "max_distance", distance), null));
            assertTrue(e.getMessage().startsWith("hamming: param [max_distance] must be"), e.getMessage());
        }
        factory.newFactory(Map.of("field", "f", "fingerprints", List.of(1L), "max_distance", 64), null);
        factory.newFactory(Map.of("field", "f", "fingerprints", List.of(1L), "max_distance", 0), null);
        for (Object value : List.of(1.5, BigInteger.ONE.shiftLeft(70))) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> factory.newFactory(Map.of("field", "f", "fingerprints", List.of(value)), null));
            assertTrue(e.getMessage().startsWith("hamming: param [fingerprints]: item 0"), e.getMessage());
        }
    }

    private static Map<String, Object> verify(String sketchField, String hexField) {
        return Map.of("sketch_field", sketchField, "hex_field", hexField, "sketch", List.of(1L, 2L), "fingerprint", 5L);
    }

    /**
     * The verify script refuses, when it is built on a shard, what it cannot read: fields of other types (which
     * failed with an illegal_state_exception, a 500), fields the index does not map, and bad parameters.
     */
    @Test
    void theVerifyScriptRefusesFieldsItCannotRead() {
        Map<String, MappedFieldType> mapped = Map.of(
            "neardup.minhash", new BinaryFieldMapper.BinaryFieldType("neardup.minhash"),
            "neardup.hex", new KeywordFieldMapper.KeywordFieldType("neardup.hex"),
            "neardup.fingerprint", new NumberFieldMapper.NumberFieldType("neardup.fingerprint", NumberFieldMapper.NumberType.LONG));
        SearchLookup lookup = new SearchLookup(mapped::get, (type, search, operation) -> null, null);
        var factory = NeardupScriptEngine.verifyFactory();
        factory.newFactory(verify("neardup.minhash", "neardup.hex"), lookup);
        IllegalArgumentException sketch = assertThrows(IllegalArgumentException.class,
            () -> factory.newFactory(verify("neardup.hex", "neardup.hex"), lookup));
        assertTrue(sketch.getMessage().startsWith("verify param [sketch_field] names [neardup.hex], a [keyword] field; it must be "
            + "a [binary] field"), sketch.getMessage());
        IllegalArgumentException hex = assertThrows(IllegalArgumentException.class,
            () -> factory.newFactory(verify("neardup.minhash", "neardup.fingerprint"), lookup));
        assertTrue(hex.getMessage().startsWith("verify param [hex_field] names [neardup.fingerprint], a [long] field; it must be "
            + "a [keyword] field"), hex.getMessage());
        IllegalArgumentException unmapped = assertThrows(IllegalArgumentException.class,
            () -> factory.newFactory(verify("nowhere", "neardup.hex"), lookup));
        assertEquals("verify reads [nowhere], which this index does not map", unmapped.getMessage());
        Map<String, Object> unsorted = new java.util.HashMap<>(verify("neardup.minhash", "neardup.hex"));
        unsorted.put("sketch", List.of(2L, 1L));
        IllegalArgumentException sketchValues = assertThrows(IllegalArgumentException.class, () -> factory.newFactory(unsorted, lookup));
        assertTrue(sketchValues.getMessage().contains("[sketch] must be distinct values in ascending order"), sketchValues.getMessage());
    }
}
