package io.neardup.plugin;

import java.util.List;

/**
 * The names of the {@code neardup.*} fields flagging reads and writes, relative to the processor's
 * {@code target_field} ({@code mappings/schema.py} spells them for Python; this is the one Java class of the plugin
 * that spells them for flagging, so a renamed field is changed in two places, not in every query).
 */
final class FlagFields {
    private FlagFields() {}

    static final String FINGERPRINT = "fingerprint";
    static final String HEX = "hex";
    static final List<String> BLOCKS = List.of("b0", "b1", "b2", "b3");
    static final String STATUS = "status";
    static final String VERSION = "version";
    static final String EXACT = "exact";
    static final String MINHASH = "minhash";
    static final String META_MINHASH = "meta_minhash";
    static final String CLUSTER = "cluster";
    static final String DUPLICATE_OF = "duplicate_of";
    static final String DISTANCE = "distance";
    static final String SIMILARITY = "similarity";
    static final String IS_DUPLICATE = "is_duplicate";
    static final String INDEXED_AT = IndexedAt.FIELD;

    /** What the drift guard reads of a canonical fetched by id ({@code LOOKUP_FIELDS} less what it does not need). */
    static final List<String> CANONICAL_SOURCE = List.of(FINGERPRINT, MINHASH, EXACT, STATUS, META_MINHASH);

    /** The format {@code CANDIDATE_DOC_VALUES} asks for {@code indexed_at}: all nine fraction digits, as stored. */
    static final String INDEXED_AT_FORMAT = "strict_date_optional_time_nanos";
}
