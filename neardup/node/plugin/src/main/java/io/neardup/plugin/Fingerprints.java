package io.neardup.plugin;

import java.util.Map;

import io.neardup.fingerprint.Fingerprinter;

/**
 * What the processor needs of the fingerprinter: a text and an optional title to the fingerprint fields, as
 * {@code mappings/schema.py} {@code record_fields} names them. An interface only so that unit tests of the
 * processor's error paths can stand in a fingerprinter that fails; a node always uses {@link #SHARED}.
 */
@FunctionalInterface
interface Fingerprints {
    /** The fields of one document; {@code title} may be null. */
    Map<String, Object> fields(String text, String title);

    /**
     * The node's one {@link Fingerprinter}, looked up at each call rather than captured: its class (and its tables)
     * load on first use, which {@link Warmup} moves off the first document's path.
     */
    Fingerprints SHARED = (text, title) -> Fingerprinter.shared().fields(text, title);
}
