package io.neardup.fingerprint;

import java.util.List;

/**
 * The names of the {@code neardup.*} fields under the target object: the one Java class that spells them
 * ({@code mappings/schema.py} spells them for Python; a parity test compares what both write).
 */
public final class FieldNames {
    private FieldNames() {}

    public static final String FINGERPRINT = "fingerprint";
    public static final String HEX = "hex";
    public static final List<String> BLOCKS = List.of("b0", "b1", "b2", "b3");
    public static final String STATUS = "status";
    public static final String VERSION = "version";
    public static final String EXACT = "exact";
    public static final String MINHASH = "minhash";
    public static final String META_MINHASH = "meta_minhash";
    public static final String CLUSTER = "cluster";
    public static final String DUPLICATE_OF = "duplicate_of";
    public static final String DISTANCE = "distance";
    public static final String SIMILARITY = "similarity";
    public static final String IS_DUPLICATE = "is_duplicate";
    public static final String INDEXED_AT = "indexed_at";
}
