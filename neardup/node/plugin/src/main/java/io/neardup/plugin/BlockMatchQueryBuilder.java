package io.neardup.plugin;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.apache.lucene.search.MatchNoDocsQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.util.BytesRef;
import org.elasticsearch.TransportVersion;
import org.elasticsearch.TransportVersions;
import org.elasticsearch.common.ParsingException;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.common.io.stream.StreamOutput;
import org.elasticsearch.index.mapper.KeywordFieldMapper;
import org.elasticsearch.index.mapper.MappedFieldType;
import org.elasticsearch.index.query.AbstractQueryBuilder;
import org.elasticsearch.index.query.SearchExecutionContext;
import org.elasticsearch.xcontent.XContentBuilder;
import org.elasticsearch.xcontent.XContentParser;

import io.neardup.search.BlockMatchQuery;
import io.neardup.search.SketchCheck;

/**
 * Query {@code neardup_blocks}: the documents holding at least {@code min_shared} of the given keyword tokens, counted
 * over several fields, each scoring the number it holds ({@link BlockMatchQuery}); with {@code verify} (the
 * parameters of the {@code verify} script), only those that also pass that second check ({@link SketchCheck}).
 *
 * <pre>{"neardup_blocks": {"tokens": {"neardup.b0": ["0:1a2b", ...], "neardup.b1": [...]}, "min_shared": 1,
 *                     "verify": {"sketch_field": "neardup.minhash", "hex_field": "neardup.hex", "sketch": [...], ...}}}</pre>
 *
 * It matches and scores as a {@code bool} of one {@code constant_score} {@code term} clause per token with
 * {@code minimum_should_match} = {@code min_shared}, the ranked form of a lookup's candidate query, for less work
 * (see {@link BlockMatchQuery}). A field that is not mapped holds nothing; a mapped field must be an indexed
 * {@code keyword} without a normalizer, since tokens are matched as they are written.
 */
public final class BlockMatchQueryBuilder extends AbstractQueryBuilder<BlockMatchQueryBuilder> {
    public static final String NAME = "neardup_blocks";
    static final String TOKENS = "tokens";
    static final String MIN_SHARED = "min_shared";
    static final String VERIFY = "verify";

    /** field → its tokens, in the order given */
    private final Map<String, List<String>> tokens;
    private final int minShared;
    /** the second check of {@code verify}, or null */
    private final SketchCheck check;

    public BlockMatchQueryBuilder(Map<String, List<String>> tokens, int minShared) {
        this(tokens, minShared, (SketchCheck) null);
    }

    /** @param verify the {@code verify} script's parameters of the second check, or null */
    public BlockMatchQueryBuilder(Map<String, List<String>> tokens, int minShared, Map<String, Object> verify) {
        this(tokens, minShared, verify == null ? null : checkOf(verify));
    }

    /** @param check the second check a match must also pass, or null */
    public BlockMatchQueryBuilder(Map<String, List<String>> tokens, int minShared, SketchCheck check) {
        if (tokens == null || tokens.isEmpty()) {
            throw new IllegalArgumentException("[" + NAME + "] needs [" + TOKENS + "]: an object of fields, each with its tokens");
        }
        if (minShared < 1) {
            throw new IllegalArgumentException("[" + NAME + "] [" + MIN_SHARED + "] must be at least 1, not " + minShared);
        }
        Map<String, List<String>> copy = new LinkedHashMap<>();
        tokens.forEach((field, values) -> copy.put(field, List.copyOf(values)));
        this.tokens = copy;
        this.minShared = minShared;
        this.check = check;
    }

    private static SketchCheck checkOf(Map<String, Object> verify) {
        for (String name : verify.keySet()) {
            if (SketchCheck.PARAMS.contains(name) == false) {
                throw new IllegalArgumentException("[" + NAME + "] [" + VERIFY + "] does not take [" + name + "]; it takes " + SketchCheck.PARAMS);
            }
        }
        try {
            return SketchCheck.fromParams(verify);
        } catch (ClassCastException e) {
            throw new IllegalArgumentException("[" + NAME + "] [" + VERIFY + "] [sketch] must be a list of numbers", e);
        }
    }

    public BlockMatchQueryBuilder(StreamInput in) throws IOException {
        super(in);
        this.tokens = in.readMap(StreamInput::readStringCollectionAsList);
        this.minShared = in.readVInt();
        this.check = in.readBoolean() ? checkOf(in.readGenericMap()) : null;
    }

    @Override
    protected void doWriteTo(StreamOutput out) throws IOException {
        out.writeMap(tokens, StreamOutput::writeStringCollection);
        out.writeVInt(minShared);
        out.writeBoolean(check != null);
        if (check != null) {
            out.writeGenericMap(check.toParams());
        }
    }

    @Override
    protected void doXContent(XContentBuilder builder, Params params) throws IOException {
        builder.startObject(NAME);
        builder.startObject(TOKENS);
        for (Map.Entry<String, List<String>> field : tokens.entrySet()) {
            builder.stringListField(field.getKey(), field.getValue());
        }
        builder.endObject();
        builder.field(MIN_SHARED, minShared);
        if (check != null) {
            builder.field(VERIFY, check.toParams());
        }
        boostAndQueryNameToXContent(builder);
        builder.endObject();
    }

    public static BlockMatchQueryBuilder fromXContent(XContentParser parser) throws IOException {
        Map<String, List<String>> tokens = null;
        int minShared = 1;
        Map<String, Object> verify = null;
        float boost = DEFAULT_BOOST;
        String queryName = null;
        String current = null;
        XContentParser.Token token;
        while ((token = parser.nextToken()) != XContentParser.Token.END_OBJECT) {
            if (token == XContentParser.Token.FIELD_NAME) {
                current = parser.currentName();
            } else if (token == XContentParser.Token.START_OBJECT && TOKENS.equals(current)) {
                tokens = parseTokens(parser);
            } else if (token == XContentParser.Token.START_OBJECT && VERIFY.equals(current)) {
                verify = parser.map();
            } else if (token.isValue() && MIN_SHARED.equals(current)) {
                minShared = parser.intValue();
            } else if (token.isValue() && BOOST_FIELD.match(current, parser.getDeprecationHandler())) {
                boost = parser.floatValue();
            } else if (token.isValue() && NAME_FIELD.match(current, parser.getDeprecationHandler())) {
                queryName = parser.text();
            } else {
                throw new ParsingException(parser.getTokenLocation(), "[" + NAME + "] does not take [" + current + "] as " + token);
            }
        }
        try {
            return new BlockMatchQueryBuilder(tokens, minShared, verify).boost(boost).queryName(queryName);
        } catch (IllegalArgumentException e) {
            throw new ParsingException(parser.getTokenLocation(), e.getMessage(), e);
        }
    }

    private static Map<String, List<String>> parseTokens(XContentParser parser) throws IOException {
        Map<String, List<String>> tokens = new LinkedHashMap<>();
        XContentParser.Token token;
        while ((token = parser.nextToken()) != XContentParser.Token.END_OBJECT) {
            String field = parser.currentName();
            if (parser.nextToken() != XContentParser.Token.START_ARRAY) {
                throw new ParsingException(parser.getTokenLocation(), "[" + NAME + "] tokens of [" + field + "] must be an array of strings");
            }
            List<String> values = new ArrayList<>();
            while ((token = parser.nextToken()) != XContentParser.Token.END_ARRAY) {
                if (token != XContentParser.Token.VALUE_STRING) {
                    throw new ParsingException(parser.getTokenLocation(), "[" + NAME + "] tokens of [" + field + "] must be strings, not " + token);
                }
                values.add(parser.text());
            }
            tokens.put(field, values);
        }
        return tokens;
    }

    @Override
    protected Query doToQuery(SearchExecutionContext context) {
        List<String> fields = new ArrayList<>();
        List<List<BytesRef>> terms = new ArrayList<>();
        for (Map.Entry<String, List<String>> entry : tokens.entrySet()) {
            MappedFieldType type = context.getFieldType(entry.getKey());
            if (type == null) {
                continue; // not mapped: holds no token, as a terms query on it matches nothing
            }
            if (type instanceof KeywordFieldMapper.KeywordFieldType == false
                || ((KeywordFieldMapper.KeywordFieldType) type).hasNormalizer()
                || type.isIndexed() == false) {
                throw new IllegalArgumentException("[" + NAME + "] field [" + entry.getKey() + "] must be an indexed keyword field "
                    + "without a normalizer, not [" + type.typeName() + "]: an index neardup did not set up (its fields mapped "
                    + "dynamically by a first write); create it with `neardup setup INDEX` before writing through the pipeline");
            }
            List<BytesRef> values = new ArrayList<>(entry.getValue().size());
            for (String value : entry.getValue()) {
                values.add(new BytesRef(value));
            }
            fields.add(type.name());
            terms.add(values);
        }
        if (fields.isEmpty()) {
            return new MatchNoDocsQuery("[" + NAME + "] none of its fields is mapped");
        }
        if (check != null) {
            for (String field : List.of(check.sketchField(), check.hexField())) {
                MappedFieldType type = context.getFieldType(field);
                if (type == null) {
                    throw new IllegalArgumentException("[" + NAME + "] verify reads [" + field + "], which this index does not map");
                }
                if (type.hasDocValues() == false) {
                    // read as none, every candidate would fail the check: the lookup would find nothing, silently
                    throw new IllegalArgumentException("[" + NAME + "] verify reads the doc values of [" + field
                        + "], which this index does not keep (mapped with doc_values false); search without verify");
                }
            }
        }
        return new BlockMatchQuery(fields, terms, minShared, check);
    }

    @Override
    protected boolean doEquals(BlockMatchQueryBuilder other) {
        return minShared == other.minShared && tokens.equals(other.tokens) && Objects.equals(check, other.check);
    }

    @Override
    protected int doHashCode() {
        return Objects.hash(tokens, minShared, check);
    }

    @Override
    public String getWriteableName() {
        return NAME;
    }

    @Override
    public TransportVersion getMinimalSupportedVersion() {
        return TransportVersions.V_8_0_0;
    }
}
