package io.neardup.plugin;

import io.neardup.fingerprint.FieldNames;
import java.util.List;

/**
 * The names of the {@code neardup.*} fields flagging reads and writes, relative to the processor's
 * {@code target_field}, as {@link FieldNames} spells them, and the lists flagging reads.
 */
final class FlagFields {
    private FlagFields() {}

    static final String FINGERPRINT = FieldNames.FINGERPRINT;
    static final String HEX = FieldNames.HEX;
    static final List<String> BLOCKS = FieldNames.BLOCKS;
    static final String STATUS = FieldNames.STATUS;
    static final String VERSION = FieldNames.VERSION;
    static final String EXACT = FieldNames.EXACT;
    static final String MINHASH = FieldNames.MINHASH;
    static final String META_MINHASH = FieldNames.META_MINHASH;
    static final String CLUSTER = FieldNames.CLUSTER;
    static final String DUPLICATE_OF = FieldNames.DUPLICATE_OF;
    static final String DISTANCE = FieldNames.DISTANCE;
    static final String SIMILARITY = FieldNames.SIMILARITY;
    static final String IS_DUPLICATE = FieldNames.IS_DUPLICATE;
    static final String INDEXED_AT = IndexedAt.FIELD;

    /** What the drift guard reads of a canonical fetched by id ({@code LOOKUP_FIELDS} less what it does not need). */
    static final List<String> CANONICAL_SOURCE = List.of(FINGERPRINT, MINHASH, EXACT, STATUS, META_MINHASH);

    /** The format {@code CANDIDATE_DOC_VALUES} asks for {@code indexed_at}: all nine fraction digits, as stored. */
    static final String INDEXED_AT_FORMAT = "strict_date_optional_time_nanos";
}
