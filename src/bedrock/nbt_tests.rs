use super::*;

fn sample() -> Tag {
    Tag::Compound(vec![
        ("name".into(), Tag::String("minecraft:stone".into())),
        (
            "states".into(),
            Tag::Compound(vec![("stone_type".into(), Tag::String("granite".into()))]),
        ),
        ("version".into(), Tag::Int(17_959_425)),
        ("b".into(), Tag::Byte(-3)),
        ("s".into(), Tag::Short(-300)),
        ("l".into(), Tag::Long(-(1 << 60))),
        ("f".into(), Tag::Float(1.5)),
        ("d".into(), Tag::Double(-0.25)),
        ("ba".into(), Tag::ByteArray(vec![1, 2, 255])),
        ("ia".into(), Tag::IntArray(vec![7, -7])),
        ("la".into(), Tag::LongArray(vec![1, 2, 3])),
        ("empty".into(), Tag::List(TAG_END, vec![])),
        (
            "ints".into(),
            Tag::List(TAG_INT, vec![Tag::Int(1), Tag::Int(2)]),
        ),
    ])
}

#[test]
fn round_trip_and_concatenated_roots() {
    let mut buf = Vec::new();
    write_root(&mut buf, "", &sample());
    write_root(&mut buf, "second", &Tag::Int(5));
    let roots = read_all(&buf).unwrap();
    assert_eq!(roots.len(), 2);
    assert_eq!(roots[0], (String::new(), sample()));
    assert_eq!(roots[1], ("second".to_string(), Tag::Int(5)));
    let mut pos = 0;
    assert_eq!(read_root(&buf, &mut pos).unwrap().1, sample());
    assert_eq!(read_root(&buf, &mut pos).unwrap().1, Tag::Int(5));
    assert_eq!(pos, buf.len());
    assert_eq!(
        sample().get("version").and_then(Tag::as_i64),
        Some(17_959_425)
    );
    assert_eq!(
        sample().get("name").and_then(Tag::as_str),
        Some("minecraft:stone")
    );
}

#[test]
fn json_rendering() {
    let json = to_json(&sample(), 2);
    assert_eq!(
        json,
        "{\"name\":\"minecraft:stone\",\"states\":{\"stone_type\":\"granite\"},\
         \"version\":17959425,\"b\":-3,\"s\":-300,\"l\":\"-1152921504606846976\",\"f\":1.5,\
         \"d\":-0.25,\"ba\":{\"array\":\"byte\",\"len\":3,\"head\":[1,2]},\"ia\":[7,-7],\
         \"la\":{\"array\":\"long\",\"len\":3,\"head\":[1,2]},\"empty\":[],\"ints\":[1,2]}"
    );
}

#[test]
fn huge_list_claim_fails_fast() {
    // A list of 2^31-1 longs in a 20-byte value.
    let mut v = vec![TAG_LIST, 0, 0, TAG_LONG];
    v.extend_from_slice(&i32::MAX.to_le_bytes());
    v.resize(20, 0);
    let e = read_all(&v).unwrap_err();
    assert!(e.is_corruption());
    assert!(e.message().contains("exceeds the 12 bytes left"), "{e}");
    // The same for arrays and negative lengths.
    for id in [TAG_BYTE_ARRAY, TAG_INT_ARRAY, TAG_LONG_ARRAY] {
        let mut v = vec![id, 0, 0];
        v.extend_from_slice(&1_000_000i32.to_le_bytes());
        assert!(read_all(&v).is_err());
        let mut v = vec![id, 0, 0];
        v.extend_from_slice(&(-1i32).to_le_bytes());
        assert!(read_all(&v).unwrap_err().message().contains("negative"));
    }
    // A list of end tags with a count.
    let mut v = vec![TAG_LIST, 0, 0, TAG_END];
    v.extend_from_slice(&5i32.to_le_bytes());
    assert!(read_all(&v).unwrap_err().message().contains("end tags"));
}

#[test]
fn depth_and_node_limits() {
    // 600 nested lists of lists.
    let mut v = vec![TAG_LIST, 0, 0];
    for _ in 0..600 {
        v.push(TAG_LIST);
        v.extend_from_slice(&1i32.to_le_bytes());
    }
    let e = read_all(&v).unwrap_err();
    assert!(e.message().contains("nesting deeper than 512"), "{e}");
    // 100 nested compounds are fine under the default limit, not under a limit of 50.
    let mut v = vec![TAG_COMPOUND, 0, 0];
    for _ in 0..100 {
        v.extend_from_slice(&[TAG_COMPOUND, 1, 0, b'c']);
    }
    v.extend(std::iter::repeat_n(TAG_END, 101));
    assert_eq!(read_all(&v).unwrap().len(), 1);
    let limits = Limits {
        max_depth: 50,
        max_nodes: 1000,
    };
    assert!(read_all_with(&v, limits).is_err());
    let limits = Limits {
        max_depth: 512,
        max_nodes: 10,
    };
    assert!(read_all_with(&v, limits)
        .unwrap_err()
        .message()
        .contains("more than 10 tags"));
}

#[test]
fn truncation_and_bad_ids_are_errors() {
    let mut buf = Vec::new();
    write_root(&mut buf, "root", &sample());
    for cut in 0..buf.len() {
        assert!(read_all(&buf[..cut]).is_err(), "cut at {cut}");
    }
    assert!(read_all(&[TAG_END]).is_err());
    assert!(read_all(&[13, 0, 0]).is_err());
    assert!(read_all(&[TAG_COMPOUND, 0, 0, 99, 0, 0]).is_err());
}
