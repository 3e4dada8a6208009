package io.neardup.fingerprint;

/**
 * The weighted features of one document: its distinct kept words, in text order, and the weight of each, in
 * parallel arrays (the weights of {@code weigh} in {@code ingest/weights.py}).
 */
public record Features(String[] words, double[] weights) {
    public Features {
        if (words.length != weights.length) {
            throw new IllegalArgumentException(words.length + " words but " + weights.length + " weights");
        }
    }

    public int size() {
        return words.length;
    }
}
