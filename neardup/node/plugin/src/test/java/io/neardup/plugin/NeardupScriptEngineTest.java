package io.neardup.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Map;

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
}
